import { describe, it, expect, beforeAll, afterAll } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import Stripe from "stripe";
import { waitFor } from "@whc/testing";
import { startCluster, type Cluster } from "./cluster.js";

/**
 * Relay endpoints across real processes (design §11): the outbox kept by the catalog, worked
 * by the replay processes over NATS. Retry delays and claim times are shortened by
 * configuration, never slept through.
 */

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A local destination: records every request and answers what `answer` says. */
async function destination(answer: (r: Received, index: number) => { status: number; delayMs?: number; body?: string }) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const r = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks) };
      const index = received.push(r) - 1;
      const a = answer(r, index);
      setTimeout(() => {
        if (!res.destroyed) res.writeHead(a.status, { "content-type": "text/plain" }).end(a.body ?? `answer ${a.status}`);
      }, a.delayMs ?? 0);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    /** (delivery id, attempt) of every request, as the destination saw them. */
    attempts: () => received.map((r) => `${String(r.headers["x-whc-delivery-id"])}#${String(r.headers["x-whc-attempt"])}`),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster({
    WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true",
    WHC_FORWARD_RETRY_BASE_MS: "100",
    WHC_FORWARD_POLL_MS: "100",
    WHC_FORWARD_CLAIM_MS: "2000",
  });
}, 120_000);
afterAll(async () => {
  await cluster?.shutdown();
});

async function relayEndpoint(slug: string, url: string, extra: Record<string, unknown> = {}) {
  const created = await cluster.api.post("/v1/endpoints", {
    slug,
    operatingMode: "relay",
    forward: { url, maxAttempts: 6, ...extra },
  });
  expect(created.status).toBe(201);
  return created.body as { id: string; webhookUrl: string };
}

interface Forwarded {
  state: string;
  attempts: { n: number; trigger: string; status: number | null; error: string | null }[];
}

async function forwardOf(endpointId: string, eventId: string): Promise<Forwarded> {
  const detail = await cluster.api.get(`/v1/endpoints/${endpointId}/events/${eventId}`);
  return detail.body.forwardedResponse as Forwarded;
}

async function allEventIds(endpointId: string): Promise<string[]> {
  const ids: string[] = [];
  let before = "";
  for (;;) {
    const page = await cluster.api.get(`/v1/endpoints/${endpointId}/events?limit=200${before}`);
    ids.push(...(page.body.items as { id: string }[]).map((i) => i.id));
    if (!page.body.nextBefore) return ids;
    before = `&before=${encodeURIComponent(page.body.nextBefore)}&beforeId=${page.body.nextBeforeId}`;
  }
}

describe("relay across processes", () => {
  it("delivers a Stripe-signed capture that the app verifies with the stripe package, and a binary body byte for byte", async () => {
    const stripe = new Stripe("sk_test_forwarding");
    const secret = "whsec_relay_e2e_secret";
    const app = await destination(() => ({ status: 200 }));
    const ep = await relayEndpoint("relay-stripe", `${app.url}/hooks`);
    const payload = JSON.stringify({ id: "evt_relay_1", object: "event", type: "invoice.paid", data: { object: { amount: 4200 } } }, null, 2);
    const signature = stripe.webhooks.generateTestHeaderString({ payload, secret });
    const sent = await fetch(`${ep.webhookUrl}/ci?x=1`, {
      method: "POST",
      headers: { "content-type": "application/json", "stripe-signature": signature },
      body: payload,
    });
    expect(sent.status).toBe(200);
    const binary = Buffer.from([0x00, 0xff, 0xfe, 0x80, 0x0a, 0x00, 0xc3, 0x28, 0x41]);
    expect((await fetch(ep.webhookUrl, { method: "PUT", headers: { "content-type": "application/octet-stream" }, body: binary })).status).toBe(200);

    await waitFor(() => app.received.length >= 2 || undefined, { what: "both deliveries", timeoutMs: 20_000 });
    const signed = app.received.find((r) => r.url === "/hooks/ci?x=1")!;
    expect(signed.method).toBe("POST");
    const verified = stripe.webhooks.constructEvent(signed.body, String(signed.headers["stripe-signature"]), secret);
    expect(verified.id).toBe("evt_relay_1");
    expect(signed.body.toString("utf8")).toBe(payload);
    const raw = app.received.find((r) => r.method === "PUT")!;
    expect(raw.url).toBe("/hooks");
    expect(Buffer.compare(raw.body, binary)).toBe(0);
    await app.close();
  }, 60_000);

  it("retries a destination answering 500, 500, 200: three attempts recorded, state delivered", async () => {
    const app = await destination((_r, i) => ({ status: i < 2 ? 500 : 200 }));
    const ep = await relayEndpoint("relay-retries", app.url);
    const id = ((await (await fetch(ep.webhookUrl, { method: "POST", body: '{"type":"retry.me"}' })).json()) as { id: string }).id;
    const done = await waitFor(
      async () => {
        const f = await forwardOf(ep.id, id);
        return f.state === "delivered" ? f : undefined;
      },
      { what: "delivered after retries", timeoutMs: 20_000 },
    );
    expect(done.attempts.map((a) => [a.n, a.trigger, a.status])).toEqual([
      [1, "initial", 500],
      [2, "retry", 500],
      [3, "retry", 200],
    ]);
    expect(app.attempts()).toEqual([`${id}#1`, `${id}#2`, `${id}#3`]);
    await app.close();
  }, 60_000);

  it("two replay processes on one NATS share the outbox: each attempt is sent once", async () => {
    const second = await cluster.extra("replay");
    const app = await destination(() => ({ status: 200, delayMs: 20 }));
    const ep = await relayEndpoint("relay-two-replays", app.url);
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) {
      const res = await fetch(ep.webhookUrl, { method: "POST", body: `{"n":${i}}` });
      ids.push(((await res.json()) as { id: string }).id);
    }
    await waitFor(() => new Set(app.received.map((r) => r.headers["x-whc-delivery-id"])).size >= ids.length || undefined, {
      what: "every capture delivered",
      timeoutMs: 30_000,
    });
    await new Promise((r) => setTimeout(r, 500));
    const seen = app.attempts();
    expect(new Set(seen).size).toBe(seen.length);
    expect(new Set(app.received.map((r) => String(r.headers["x-whc-delivery-id"])))).toEqual(new Set(ids));
    await second.proc.stop();
    await app.close();
  }, 90_000);

  it("SIGKILL of the replay process and of the catalog while deliveries are pending: every one is made after restart, no attempt number twice", async () => {
    // The destination refuses everything at first, so deliveries pile up pending with retries due.
    let open = false;
    const app = await destination(() => ({ status: open ? 200 : 503, delayMs: 30 }));
    // Its breaker (design §18) stays closed through these failures: this is about retries pending
    // across the restarts (delivery-control.test.ts kills the same processes while one is open).
    const ep = await relayEndpoint("relay-crash", app.url, { maxAttempts: 20, breaker: { failures: 100 } });
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) {
      const res = await fetch(ep.webhookUrl, { method: "POST", body: `{"crash":${i}}` });
      expect(res.status).toBe(200);
      ids.push(((await res.json()) as { id: string }).id);
    }
    await waitFor(() => app.received.length >= 10 || undefined, { what: "first attempts under way" });

    expect(await cluster.stop("replay", "SIGKILL")).toBe(null);
    expect(await cluster.stop("catalog", "SIGKILL")).toBe(null);
    open = true;
    await cluster.start("catalog");
    await cluster.start("replay");

    // One list call per look: 25 detail reads every 50 ms outran the key's 50 requests a
    // second, and once its burst was spent no look got all 25 answers.
    await waitFor(
      async () => {
        const events = (await cluster.api.get(`/v1/endpoints/${ep.id}/events?limit=50`)).body.items as { id: string; forwardState: string }[];
        if (events.length === ids.length && events.every((e) => e.forwardState === "delivered")) return true;
        // Not yet: what a timeout reports (CI once timed out here under load, not reproduced).
        const waiting = events.filter((e) => e.forwardState !== "delivered");
        const first = waiting[0] && (await forwardOf(ep.id, waiting[0].id));
        throw new Error(
          `${events.length} listed, ${waiting.length} not delivered (${waiting.map((e) => e.forwardState).join(",")}); ` +
            `the destination saw ${app.received.length}; first waiting: ${JSON.stringify(first)}; now ${new Date().toISOString()}`,
        );
      },
      { what: "every pending delivery made after the restarts", timeoutMs: 45_000, intervalMs: 200 },
    );
    const seen = app.attempts();
    expect(new Set(seen).size).toBe(seen.length);
    expect(new Set(await allEventIds(ep.id))).toEqual(new Set(ids));
    await app.close();
  }, 120_000);
});

describe("proxy across processes", () => {
  it("passes the destination's status, headers and body to the sender; a slow destination gives 504, a dead one 502", async () => {
    const app = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        if (req.url?.startsWith("/slow")) return void setTimeout(() => res.end("late"), 1500);
        res.writeHead(201, { "x-custom": "from-app", "content-type": "application/json" }).end('{"created":true}');
      });
    });
    await new Promise<void>((r) => app.listen(0, "127.0.0.1", r));
    const appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
    try {
      const created = await cluster.api.post("/v1/endpoints", { slug: "proxy-e2e", operatingMode: "proxy", forward: { url: appUrl, timeoutMs: 300 } });
      expect(created.status).toBe(201);
      const ep = created.body as { id: string; webhookUrl: string };
      const passed = await fetch(`${ep.webhookUrl}/orders?id=7`, { method: "POST", body: '{"order":7}' });
      expect(passed.status).toBe(201);
      expect(passed.headers.get("x-custom")).toBe("from-app");
      expect(await passed.text()).toBe('{"created":true}');

      const slow = await fetch(`${ep.webhookUrl}/slow`, { method: "POST", body: "{}" });
      expect(slow.status).toBe(504);
      expect(await slow.json()).toEqual({ error: "forward_failed", reason: "timeout" });

      const dead = await cluster.api.call("PATCH", `/v1/endpoints/${ep.id}`, { json: { forward: { url: "http://127.0.0.1:9" } } });
      expect(dead.status).toBe(200);
      const refused = await waitFor(
        async () => {
          const res = await fetch(ep.webhookUrl, { method: "POST", body: "{}" });
          return res.status === 502 ? res : undefined;
        },
        { what: "ingest sees the new destination" },
      );
      expect(await refused.json()).toEqual({ error: "forward_failed", reason: "connection_refused" });
      const listed = await cluster.api.get(`/v1/endpoints/${ep.id}/events?responseCode=504`);
      expect(listed.body.items).toHaveLength(1);
    } finally {
      await new Promise<void>((r) => app.close(() => r()));
    }
  }, 60_000);
});
