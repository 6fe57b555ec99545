import { describe, it, expect, beforeAll, afterAll } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { apiClient, startNode, waitFor, type ApiClient } from "@whc/testing";
import { startCluster, type Cluster } from "./cluster.js";
import { startSingleProcess, type SingleProcess } from "./single-process.js";

/**
 * Bulk redelivery across real processes (design §18; ADR 0089): a job of 1,000 events is
 * walked by the replay service into the outbox a window at a time; the replay process (the
 * all-in-one process) is killed with SIGKILL mid-way, with the job's deliveries in flight at a
 * destination that holds them; started again, it continues the job from its stored cursor, and
 * the job ends `done` with every event accepted by the destination exactly once. Waits are for
 * states, never for time; the lease and claim times are shortened by configuration.
 */

const EVENTS = 1000;
const ENV = {
  WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true",
  // The checks read the job every quarter second; the captures are sent 25 at a time.
  WHC_QUOTA_API_RPS: "5000",
  WHC_FORWARD_RETRY_BASE_MS: "100",
  WHC_FORWARD_POLL_MS: "100",
  // What the killed process held (its job's lease, its claims) is taken over this long after.
  WHC_FORWARD_CLAIM_MS: "3000",
  WHC_EGRESS_SLOTS_PER_ORIGIN: "64",
  WHC_REDELIVERY_PAGE_SIZE: "50",
  WHC_REDELIVERY_WINDOW: "100",
};

interface Held {
  deliveryId: string;
  answer(): void;
  gone(): boolean;
}

/**
 * A destination that answers 200 to the first `allowed` requests and holds the rest until it is
 * allowed more. A held request whose sender died is abandoned (its connection closed unanswered):
 * `accepted` lists only what was answered 2xx on a live connection, by delivery id.
 */
async function allowanceDestination() {
  const accepted: string[] = [];
  const abandoned: string[] = [];
  const held: Held[] = [];
  let allowed = 0;
  let answered = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const deliveryId = String(req.headers["x-whc-delivery-id"] ?? "");
      let closed = false;
      res.on("close", () => {
        if (!res.writableFinished) closed = true;
      });
      const h: Held = {
        deliveryId,
        gone: () => closed || req.socket.destroyed,
        answer() {
          if (h.gone()) return void abandoned.push(deliveryId);
          answered += 1;
          res.end("ok", () => accepted.push(deliveryId));
        },
      };
      if (answered < allowed) h.answer();
      else held.push(h);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/bulk`,
    accepted,
    abandoned,
    held: () => held.length,
    heldGone: () => held.filter((h) => h.gone()).length,
    /** Answers up to `n` requests in all (Infinity: every one), the held ones first. */
    allow(n: number) {
      allowed = n;
      while (answered < allowed && held.length > 0) held.shift()!.answer();
    },
    /** The held requests whose sender died, answered (and so abandoned) now. */
    dropGone() {
      for (const h of held.filter((x) => x.gone())) {
        held.splice(held.indexOf(h), 1);
        h.answer();
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A destination that answers every request 200 (the captures' first delivery goes there). */
async function plainDestination() {
  let count = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      count += 1;
      res.end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/first`,
    count: () => count,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface Job {
  id: string;
  state: string;
  total: number;
  queued: number;
  done: number;
  failed: number;
}

/**
 * A relay endpoint with `EVENTS` captures, each delivered once to a first destination; then its
 * destination (the same one, by id) moved to `url`, so that only the job's sends reach it.
 */
async function deliveredCaptures(api: ApiClient, firstUrl: string, url: string): Promise<{ endpointId: string; ids: string[] }> {
  const created = await api.post("/v1/endpoints", { operatingMode: "relay", destinations: [{ name: "app", url: firstUrl }] });
  expect(created.status, created.text).toBe(201);
  const ep = created.body as { id: string; webhookUrl: string; destinations: { id: string }[] };
  const ids: string[] = [];
  for (let i = 0; i < EVENTS; i += 25) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(25, EVENTS - i) }, async (_, j) => {
        const res = await fetch(ep.webhookUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ type: "order.paid", n: i + j }) });
        expect(res.status).toBe(200);
        return ((await res.json()) as { id: string }).id;
      }),
    );
    ids.push(...batch);
  }
  const count = async (filter: Record<string, unknown>) => ((await api.post(`/v1/endpoints/${ep.id}/redeliveries`, { filter, dryRun: true })).body as { count: number }).count;
  await waitFor(async () => ((await count({ forwardState: "delivered" })) === EVENTS ? true : undefined), { what: "every capture delivered once", timeoutMs: 120_000, intervalMs: 250 });
  const moved = await api.call("PATCH", `/v1/endpoints/${ep.id}`, { json: { destinations: [{ id: ep.destinations[0]!.id, name: "app", url }] } });
  expect(moved.status, moved.text).toBe(200);
  return { endpointId: ep.id, ids };
}

const jobOf = async (api: ApiClient, endpointId: string, jobId: string): Promise<Job> => {
  const res = await api.get(`/v1/endpoints/${endpointId}/redeliveries/${jobId}`);
  expect(res.status, res.text).toBe(200);
  return res.body as Job;
};

/**
 * The scenario, up to the kill and after the restart: a job of every event; the destination
 * lets 300 through and holds the rest; once those 300 are recorded (the job's walk mid-way,
 * at most a window past them), `kill` runs; then `restart`, and every event goes through.
 */
async function bulkJobSurvivesKill(api: () => ApiClient, kill: () => Promise<void>, restart: () => Promise<void>): Promise<void> {
  const first = await plainDestination();
  const sink = await allowanceDestination();
  try {
    const { endpointId, ids } = await deliveredCaptures(api(), first.url, sink.url);
    expect((await api().post(`/v1/endpoints/${endpointId}/redeliveries`, { filter: {}, dryRun: true })).body).toEqual({ count: EVENTS });
    sink.allow(300);
    const started = await api().post(`/v1/endpoints/${endpointId}/redeliveries`, { filter: { forwardState: "delivered" } });
    expect(started.status, started.text).toBe(202);
    const job = started.body as Job;
    expect(job).toMatchObject({ state: "running", total: EVENTS, done: 0, failed: 0 });

    // 300 accepted and recorded, more held at the destination, the walk not at its end.
    const mid = await waitFor(
      async () => {
        const j = await jobOf(api(), endpointId, job.id);
        return j.done === 300 && sink.held() > 0 ? j : undefined;
      },
      { what: "300 of the job's deliveries recorded and more in flight", timeoutMs: 60_000, intervalMs: 250 },
    );
    expect(mid.state).toBe("running");
    expect(mid.queued).toBeLessThan(EVENTS);
    expect(mid.queued).toBeLessThanOrEqual(300 + Number(ENV.WHC_REDELIVERY_WINDOW));
    expect(sink.accepted).toHaveLength(300);

    await kill();
    // The killed sender's connections closed with it: what it held in flight is abandoned, never acted on.
    await waitFor(async () => (sink.heldGone() === sink.held() ? true : undefined), { what: "the held requests' connections closed" });
    const inFlightAtKill = sink.held();
    expect(inFlightAtKill).toBeGreaterThan(0);
    sink.dropGone();
    expect(sink.abandoned).toHaveLength(inFlightAtKill);

    await restart();
    sink.allow(Infinity);
    const done = await waitFor(
      async () => {
        const j = await jobOf(api(), endpointId, job.id);
        return j.state === "done" ? j : undefined;
      },
      { what: "the job done", timeoutMs: 120_000, intervalMs: 250 },
    );
    expect(done).toMatchObject({ total: EVENTS, queued: EVENTS, done: EVENTS, failed: 0 });
    // Every event accepted exactly once: none skipped, none repeated, whatever was in flight at the kill.
    expect(sink.accepted).toHaveLength(EVENTS);
    expect(new Set(sink.accepted).size).toBe(EVENTS);
    expect([...sink.accepted].sort()).toEqual([...ids].sort());
    for (const abandoned of sink.abandoned) expect(sink.accepted).toContain(abandoned);
    // The first destination got each capture once, and nothing of the job.
    expect(first.count()).toBe(EVENTS);
    // The job's attempts are recorded as bulk; nothing is left to redo twice.
    const detail = await api().get(`/v1/endpoints/${endpointId}/events/${ids[0]}`);
    const triggers = (detail.body.forwardedResponse.attempts as { trigger: string }[]).map((a) => a.trigger);
    expect(triggers[0]).toBe("initial");
    expect(triggers.slice(1).every((t) => t === "bulk")).toBe(true);
    expect((await api().post(`/v1/endpoints/${endpointId}/redeliveries`, { filter: { forwardState: "pending" }, dryRun: true })).body).toEqual({ count: 0 });
  } finally {
    await sink.close();
    await first.close();
  }
}

describe("bulk redelivery across processes: a SIGKILL of the replay process mid-job", () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster(ENV);
  }, 120_000);
  afterAll(async () => {
    await cluster?.shutdown();
  });

  it("continues the job from its stored cursor once replay is back: done, every event sent once", async () => {
    await bulkJobSurvivesKill(
      () => cluster.api,
      async () => {
        expect(await cluster.stop("replay", "SIGKILL")).toBe(null);
      },
      () => cluster.start("replay"),
    );
  }, 300_000);
});

describe("bulk redelivery in the all-in-one process: a SIGKILL mid-job", () => {
  let aio: SingleProcess;
  const key = `whc_${"B".repeat(20)}${"8".repeat(20)}`;
  beforeAll(async () => {
    aio = await startSingleProcess("whc-e2e-redelivery-", { ...ENV, WHC_BOOTSTRAP_API_KEYS: `bulk:${key}` });
  }, 120_000);
  afterAll(async () => {
    await aio?.stop();
  });

  it("continues the job from its stored cursor after the process starts again: done, every event sent once", async () => {
    await bulkJobSurvivesKill(
      () => apiClient(aio.gatewayUrl, key),
      async () => {
        expect(await aio.proc.stop("SIGKILL")).toBe(null);
      },
      async () => {
        aio.proc = startNode(aio.main, aio.env);
        await aio.proc.waitForOutput(/webhook-capture ready/);
      },
    );
  }, 300_000);
});
