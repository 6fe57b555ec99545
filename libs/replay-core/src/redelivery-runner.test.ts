import { afterEach, describe, expect, it, vi } from "vitest";
import type { Interceptor } from "@connectrpc/connect";
import { CatalogService, type Endpoint, type RedeliveryJob } from "@whc/contracts";
import { createCatalogService } from "@whc/catalog-core";
import { createServiceClient } from "@whc/rpc";
import { appendCaptures } from "@whc/testing";
import { AppError } from "@whc/errors";
import { createForwarder, type Forwarder } from "./forwarder.js";
import { createRedeliveryRunner, type RedeliveryRunnerOptions } from "./redelivery-runner.js";
import { logger, onCleanup, runCleanups, serve, startBackends, startTarget, type Backends } from "./testing/index.js";

/*
 * Bulk redelivery's runner (ADR 0089) against the real catalog on SQLite, the real outbox
 * worker and a real local destination. Times are configured down to milliseconds; the tests
 * wait for states, never for time.
 */

afterEach(runCleanups);

const DESTINATION = "01a20000-0000-7000-8000-00000000d001";

/** A destination answering `status` (default 200), counting what each delivery id got. */
async function destination(status: () => number = () => 200) {
  const target = await startTarget((_req, res) => {
    res.statusCode = status();
    res.end("ok");
  });
  const byDelivery = () => {
    const counts = new Map<string, number>();
    for (const r of target.received) {
      const id = r.headers.find(([n]) => n.toLowerCase() === "x-whc-delivery-id")?.[1] ?? "";
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    return counts;
  };
  return { ...target, byDelivery };
}

async function relayEndpoint(b: Backends, url: string, maxAttempts = 6): Promise<Endpoint> {
  return b.createEndpoint({ forwardJson: JSON.stringify([{ id: DESTINATION, name: "app", url, keepPath: false, timeoutMs: 5000, maxAttempts }]) });
}

/** `n` relay captures of the endpoint, their deliveries in the outbox. */
async function captures(b: Backends, endpoint: Endpoint, url: string, n: number): Promise<string[]> {
  const events = await appendCaptures(
    b.catalog,
    b.sealer,
    Array.from({ length: n }, (_, i) => ({
      accountId: endpoint.accountId,
      endpointId: endpoint.id,
      body: `{"n":${i}}`,
      canonicalEventType: i % 2 === 0 ? "invoice.paid" : "invoice.failed",
      deliveries: [{ destinationId: DESTINATION, target: url }],
      forwardScheduled: true,
    })),
  );
  return events.map((e) => e.id);
}

/** The same catalog service over the same store, its calls through `interceptor` (another process's client). */
function catalogThrough(b: Backends, interceptor: Interceptor): Backends["catalog"] {
  return createServiceClient(CatalogService, serve((r) => r.service(CatalogService, createCatalogService(b.store)), [interceptor]));
}

function startForwarder(b: Backends): Forwarder {
  const forwarder = createForwarder({ ...b.deps, bus: b.bus }, { connectTimeoutMs: 2000, retryBaseMs: 5, pollMs: 20, claimMs: 10_000 });
  forwarder.start();
  onCleanup(() => forwarder.stop());
  return forwarder;
}

function startRunner(b: Backends, options: Partial<RedeliveryRunnerOptions> & { catalog?: Backends["catalog"]; onQueued?: () => void } = {}) {
  const { catalog = b.catalog, onQueued, ...rest } = options;
  const runner = createRedeliveryRunner({ catalog, logger, ...(onQueued ? { onQueued } : {}) }, { pollMs: 20, leaseMs: 10_000, pageSize: 4, window: 6, ...rest });
  runner.start();
  onCleanup(() => runner.stop());
  return runner;
}

async function startJob(b: Backends, endpoint: Endpoint, filter: Record<string, unknown> = {}): Promise<RedeliveryJob> {
  const { job } = await b.catalog.createRedeliveryJob({
    accountId: endpoint.accountId,
    endpointId: endpoint.id,
    filter,
    audit: { keyId: b.owner.keyId, keyPrefix: "whc_test", remoteIp: "127.0.0.1", requestId: "r", detailsJson: "", action: "" },
  });
  return job!;
}

const jobOf = async (b: Backends, endpoint: Endpoint, id: string) => (await b.catalog.getRedeliveryJob({ accountId: endpoint.accountId, endpointId: endpoint.id, jobId: id })).job!;
const waitFor = <T>(what: () => Promise<T | undefined>, timeout = 15_000) =>
  vi.waitFor(
    async () => {
      const v = await what();
      if (v === undefined) throw new Error("not yet");
      return v;
    },
    { timeout, interval: 20 },
  );
const attemptsOf = async (b: Backends, endpoint: Endpoint, eventId: string) =>
  (await b.catalog.getEvent({ accountId: endpoint.accountId, endpointId: endpoint.id, eventId, markRead: false })).event!.deliveries[0]!.attempts.map((a) => [a.n, a.trigger]);

/** A relay endpoint whose `n` captures were each delivered once (attempt 1). */
async function delivered(b: Backends, n: number, status?: () => number, maxAttempts?: number) {
  const target = await destination(status);
  const endpoint = await relayEndpoint(b, target.url, maxAttempts);
  const ids = await captures(b, endpoint, target.url, n);
  const forwarder = startForwarder(b);
  await waitFor(async () => ((await b.catalog.getOutboxStats({})).pending === 0n && target.received.length >= n ? true : undefined));
  return { target, endpoint, ids, forwarder };
}

describe("the bulk redelivery runner", () => {
  it("puts every delivery back through the outbox a window at a time; each is sent once more, trigger bulk, and the job ends done", async () => {
    const b = await startBackends();
    const { target, endpoint, ids, forwarder } = await delivered(b, 25);
    const job = await startJob(b, endpoint);
    expect([job.state, Number(job.total), Number(job.queued)]).toEqual(["running", 25, 0]);
    let mostWaiting = 0;
    const sample = setInterval(() => {
      void b.catalog.getOutboxStats({}).then((s) => (mostWaiting = Math.max(mostWaiting, Number(s.pending))));
    }, 2);
    onCleanup(() => clearInterval(sample));
    startRunner(b, { onQueued: () => forwarder.wake() });
    const done = await waitFor(async () => {
      const j = await jobOf(b, endpoint, job.id);
      return j.state === "done" ? j : undefined;
    });
    expect([Number(done.total), Number(done.queued), Number(done.done), Number(done.failed), done.walked]).toEqual([25, 25, 25, 0, true]);
    expect(done.finishedAtMs).toBeDefined();
    expect(target.received).toHaveLength(50);
    expect([...target.byDelivery().values()].every((n) => n === 2)).toBe(true);
    for (const id of ids) expect(await attemptsOf(b, endpoint, id)).toEqual([[1, "initial"], [2, "bulk"]]);
    // Never more of the job's deliveries waiting than its window (6).
    expect(mostWaiting).toBeLessThanOrEqual(6);
  });

  it("gives a delivery put back a fresh attempt budget: an exhausted one is tried maxAttempts times more, then counted failed", async () => {
    const b = await startBackends();
    const { endpoint, ids } = await delivered(b, 1, () => 503, 2);
    expect(await attemptsOf(b, endpoint, ids[0]!)).toEqual([[1, "initial"], [2, "retry"]]);
    const job = await startJob(b, endpoint, { forwardState: "exhausted" });
    expect(Number(job.total)).toBe(1);
    startRunner(b);
    const done = await waitFor(async () => {
      const j = await jobOf(b, endpoint, job.id);
      return j.state === "done" ? j : undefined;
    });
    expect([Number(done.done), Number(done.failed)]).toEqual([0, 1]);
    expect(await attemptsOf(b, endpoint, ids[0]!)).toEqual([[1, "initial"], [2, "retry"], [3, "bulk"], [4, "bulk"]]);
  });

  it("leaves a job a dead runner held at its cursor; another takes it once the lease ends and repeats no event", async () => {
    const b = await startBackends();
    const { target, endpoint, ids, forwarder } = await delivered(b, 12);
    await forwarder.stop();
    const job = await startJob(b, endpoint);
    // The first runner dies after its first page: every later call of its fails.
    let pages = 0;
    const dying: Interceptor = (next) => async (req) => {
      if (pages >= 1) throw new AppError("service_unavailable", "runner gone");
      const res = await next(req);
      if (req.method.name === "RunRedeliveryPage") pages += 1;
      return res;
    };
    const dyingCatalog = catalogThrough(b, dying);
    startRunner(b, { catalog: dyingCatalog, owner: "first", leaseMs: 300, pageSize: 5, window: 100 });
    const stuck = await waitFor(async () => {
      const j = await jobOf(b, endpoint, job.id);
      return pages >= 1 && Number(j.queued) === 5 ? j : undefined;
    });
    expect(stuck.walked).toBe(false);
    // The second runner waits out the first's lease, then continues from the stored cursor.
    const second = startForwarder(b);
    startRunner(b, { owner: "second", leaseMs: 300, pageSize: 5, window: 100, onQueued: () => second.wake() });
    const done = await waitFor(async () => {
      const j = await jobOf(b, endpoint, job.id);
      return j.state === "done" ? j : undefined;
    });
    expect([Number(done.total), Number(done.queued), Number(done.done)]).toEqual([12, 12, 12]);
    expect(target.received).toHaveLength(24);
    for (const id of ids) expect(await attemptsOf(b, endpoint, id)).toEqual([[1, "initial"], [2, "bulk"]]);
  });

  it("lets one runner at a time walk a job, and a stopped runner hands it over at once", async () => {
    const b = await startBackends();
    const { endpoint, forwarder } = await delivered(b, 20);
    // Nothing sends: the job's window (4) fills after its first page and stays full.
    await forwarder.stop();
    const owners: string[] = [];
    const watching: Interceptor = (next) => async (req) => {
      const res = await next(req);
      if (req.method.name === "RunRedeliveryPage" && (res.message as { job?: unknown }).job) owners.push((req.message as unknown as { owner: string }).owner);
      return res;
    };
    const watched = catalogThrough(b, watching);
    const job = await startJob(b, endpoint);
    const runners = new Map(["one", "two"].map((owner) => [owner, startRunner(b, { catalog: watched, owner, window: 4, pageSize: 4, leaseMs: 60_000 })]));
    await waitFor(async () => (owners.length >= 5 ? true : undefined));
    expect(new Set(owners).size).toBe(1);
    const holder = owners[0]!;
    const other = holder === "one" ? "two" : "one";
    expect(Number((await jobOf(b, endpoint, job.id)).queued)).toBe(4);
    // The holder stops: it gives the job back at once, and the other takes it without waiting out the lease.
    await runners.get(holder)!.stop();
    const handedAt = owners.length;
    await waitFor(async () => (owners.slice(handedAt).includes(other) ? true : undefined), 5_000);
    expect(owners.slice(handedAt).every((o) => o === other)).toBe(true);
    expect(Number((await jobOf(b, endpoint, job.id)).queued)).toBe(4);
  });

  it("stops walking a canceled job; what it put back still ends and counts", async () => {
    const b = await startBackends();
    const { endpoint, forwarder } = await delivered(b, 10);
    await forwarder.stop();
    const job = await startJob(b, endpoint);
    startRunner(b, { pageSize: 3, window: 3 });
    await waitFor(async () => (Number((await jobOf(b, endpoint, job.id)).queued) === 3 ? true : undefined));
    const { job: canceled } = await b.catalog.cancelRedeliveryJob({ accountId: endpoint.accountId, endpointId: endpoint.id, jobId: job.id });
    expect([canceled!.state, Number(canceled!.queued), Number(canceled!.total)]).toEqual(["canceled", 3, 3]);
    startForwarder(b);
    const counted = await waitFor(async () => {
      const j = await jobOf(b, endpoint, job.id);
      return Number(j.done) === 3 ? j : undefined;
    });
    expect([counted.state, Number(counted.queued)]).toEqual(["canceled", 3]);
  });
});

