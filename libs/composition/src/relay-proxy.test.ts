import { describe, it, expect, beforeAll, afterAll } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { loadConfig } from "@whc/config";
import { CatalogService, CryptoService } from "@whc/contracts";
import { createLogger } from "@whc/logging";
import { createInMemoryTransport, createPeerTransport, createServiceClient } from "@whc/rpc";
import { createEnvelopeOpener, openCapture } from "@whc/sealing";
import { freePort, tempDir, waitFor } from "@whc/testing";
import { startTestSystem, type TestSystem } from "./testing/index.js";
import { allInOneSpec } from "./specs.js";
import { createBus, createCatalogNode, createCryptoNode, createIngestNode } from "./nodes.js";

/**
 * relay and proxy endpoints (design §11) end to end: real captures over HTTP into ingest, real
 * destinations on loopback (allowed by WHC_REPLAY_ALLOW_PRIVATE_TARGETS), the replay service
 * and its outbox worker in the same process.
 */

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

interface Destination {
  url: string;
  seen: Seen[];
  close(): Promise<void>;
}

/** A local destination: records each request, then lets `answer` reply (or not). */
async function destination(answer: (res: http.ServerResponse, seen: Seen) => void): Promise<Destination> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const one = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks) };
      seen.push(one);
      answer(res, one);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

interface Ep {
  id: string;
  webhookUrl: string;
}

interface Attempt {
  n: number;
  trigger: string;
  url: string;
  status: number | null;
  error: string | null;
  headers: Record<string, string[]>;
  bodyBase64: string;
}

interface Forwarded {
  state?: string;
  target?: string;
  nextAttemptAt?: string | null;
  attempts?: Attempt[];
}

const RETRY_BASE_MS = "50";

let t: TestSystem;
const destinations: Destination[] = [];
beforeAll(async () => {
  t = await startTestSystem({
    WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true",
    WHC_FORWARD_RETRY_BASE_MS: RETRY_BASE_MS,
    WHC_FORWARD_POLL_MS: "50",
    WHC_MAX_STORED_BODY_BYTES: "1000",
    WHC_MAX_INBOUND_BODY_BYTES: "65536",
  });
});
afterAll(async () => {
  await Promise.all(destinations.splice(0).map((d) => d.close()));
  await t?.stop();
});

async function serveDestination(answer: (res: http.ServerResponse, seen: Seen) => void): Promise<Destination> {
  const d = await destination(answer);
  destinations.push(d);
  return d;
}

async function createEndpoint(system: TestSystem, body: Record<string, unknown>): Promise<Ep> {
  const res = await system.a.post("/v1/endpoints", body);
  expect(res.status, res.text).toBe(201);
  return res.body as Ep;
}

async function eventDetail(system: TestSystem, ep: Ep, eventId: string) {
  const res = await system.a.get(`/v1/endpoints/${ep.id}/events/${eventId}`);
  expect(res.status, res.text).toBe(200);
  return res.body as { id: string; responseCode: number; body: string; bodyEncoding: string; forwardedResponse: Forwarded; diagnostic: Record<string, unknown> };
}

async function newestEvent(system: TestSystem, ep: Ep) {
  const items = (await system.a.get(`/v1/endpoints/${ep.id}/events?limit=1`)).body.items as { id: string }[];
  expect(items).toHaveLength(1);
  return eventDetail(system, ep, (items[0] as { id: string }).id);
}

describe("a relay endpoint", () => {
  it("answers the sender with its configured response before delivering, then delivers the exact capture", async () => {
    let senderAnswered!: () => void;
    const answered = new Promise<void>((r) => (senderAnswered = r));
    // The destination answers only once the sender has its answer: a relay that waited for
    // the delivery before answering would never get here.
    const dest = await serveDestination((res) => void answered.then(() => res.end("thanks")));
    const ep = await createEndpoint(t, {
      operatingMode: "relay",
      forward: { url: `${dest.url}/hooks` },
      response: { status: 202, body: "queued {{eventId}}" },
    });
    const payload = Buffer.from([0x7b, 0x00, 0xff, 0xfe, 0x0d, 0x0a, 0x7d]);
    const res = await fetch(`${ep.webhookUrl}/ci/run?x=1&y=%20`, {
      method: "PUT",
      headers: { "content-type": "application/octet-stream", "x-custom": "kept" },
      body: payload,
    });
    expect(res.status).toBe(202);
    const text = await res.text();
    senderAnswered();
    const eventId = text.replace("queued ", "");

    const delivered = await waitFor(
      async () => {
        const f = (await eventDetail(t, ep, eventId)).forwardedResponse;
        return f.state === "delivered" ? f : undefined;
      },
      { what: "the relay delivery" },
    );
    expect(delivered.target).toBe(`${dest.url}/hooks/ci/run?x=1&y=%20`);
    expect(delivered.nextAttemptAt).toBeNull();
    expect(delivered.attempts).toHaveLength(1);
    expect(delivered.attempts?.[0]).toMatchObject({ n: 1, trigger: "initial", status: 200, error: null, url: `${dest.url}/hooks/ci/run?x=1&y=%20` });
    expect(Buffer.from(delivered.attempts?.[0]?.bodyBase64 ?? "", "base64").toString()).toBe("thanks");

    expect(dest.seen).toHaveLength(1);
    const got = dest.seen[0] as Seen;
    expect(got.method).toBe("PUT");
    expect(got.url).toBe("/hooks/ci/run?x=1&y=%20");
    expect(got.body.equals(payload)).toBe(true);
    expect(got.headers["x-custom"]).toBe("kept");
    expect(got.headers["x-whc-delivery-id"]).toBe(eventId);
    expect(got.headers["x-whc-attempt"]).toBe("1");
  });

  it("keeps the whole body of a capture larger than the stored-body limit, to forward it exactly", async () => {
    const dest = await serveDestination((res) => res.end());
    const ep = await createEndpoint(t, { operatingMode: "relay", forward: { url: dest.url, keepPath: false } });
    // Over WHC_MAX_STORED_BODY_BYTES (1000 here), under the inbound limit.
    const payload = Buffer.alloc(60_000, 0x61);
    const res = await fetch(`${ep.webhookUrl}/ignored?q=1`, { method: "POST", body: payload });
    expect(res.status).toBe(200);
    const { id } = (await res.json()) as { id: string };
    await waitFor(async () => ((await eventDetail(t, ep, id)).forwardedResponse.state === "delivered" ? true : undefined), { what: "delivery" });
    expect(dest.seen[0]?.url).toBe("/");
    expect(dest.seen[0]?.body.equals(payload)).toBe(true);
  });
});

describe("a proxy endpoint", () => {
  it("passes the destination's status, headers and body through to the sender", async () => {
    const dest = await serveDestination((res) => {
      res.writeHead(201, { "content-type": "application/json", "x-custom": "from-destination", "content-security-policy": "default-src *" });
      res.end(JSON.stringify({ created: true }));
    });
    const ep = await createEndpoint(t, { operatingMode: "proxy", forward: { url: `${dest.url}/app` }, response: { status: 500 } });
    const res = await fetch(`${ep.webhookUrl}/orders?id=7`, { method: "POST", headers: { "content-type": "application/json" }, body: "{\"order\":7}" });
    expect(res.status).toBe(201);
    expect(res.headers.get("x-custom")).toBe("from-destination");
    // The destination's bytes come from the webhook origin: never a page of it (design §14).
    expect([res.headers.get("x-content-type-options"), res.headers.get("content-security-policy")]).toEqual(["nosniff", "sandbox"]);
    expect(res.headers.get("content-type")).toBe("application/json");
    const body = await res.text();
    expect(JSON.parse(body)).toEqual({ created: true });
    expect(res.headers.get("content-length")).toBe(String(Buffer.byteLength(body)));

    expect(dest.seen.map((s) => [s.method, s.url, s.body.toString()])).toEqual([["POST", "/app/orders?id=7", "{\"order\":7}"]]);
    const event = await newestEvent(t, ep);
    expect(event.body).toBe("{\"order\":7}");
    expect(event.diagnostic.responseSource).toBe("proxy");
    expect(event.forwardedResponse).toMatchObject({ state: "delivered", target: `${dest.url}/app/orders?id=7`, nextAttemptAt: null });
    expect(event.forwardedResponse.attempts).toHaveLength(1);
    expect(event.forwardedResponse.attempts?.[0]).toMatchObject({ n: 1, trigger: "initial", status: 201, error: null });
    expect(dest.seen[0]?.headers["x-whc-delivery-id"]).toBe(event.id);
    // The status actually sent becomes the event's responseCode once the sender has it (design §10).
    const answered = await waitFor(async () => {
      const again = await eventDetail(t, ep, event.id);
      return again.responseCode === 201 ? again : undefined;
    }, { what: "the proxied answer recorded on the event" });
    expect(answered.diagnostic.responseSource).toBe("proxy");
    const listed = await t.a.get(`/v1/endpoints/${ep.id}/events?responseCode=201`);
    expect(listed.body.items.map((i: { id: string }) => i.id)).toEqual([event.id]);
  });

  it("numbers a proxied capture's own attempt 1, taken by its append, and a redelivery after it 2", async () => {
    const dest = await serveDestination((res) => res.writeHead(200).end("ok"));
    const ep = await createEndpoint(t, { operatingMode: "proxy", forward: { url: `${dest.url}/app` } });
    const res = await fetch(ep.webhookUrl, { method: "POST", headers: { "content-type": "application/json" }, body: "{\"n\":1}" });
    expect(res.status).toBe(200);
    const event = await newestEvent(t, ep);
    const again = await t.a.post(`/v1/endpoints/${ep.id}/events/${event.id}/redeliver`, {});
    expect(again.status, again.text).toBe(200);
    const detail = await eventDetail(t, ep, event.id);
    expect(detail.forwardedResponse.attempts?.map((a) => [a.n, a.trigger, a.status])).toEqual([
      [1, "initial", 200],
      [2, "manual", 200],
    ]);
    expect(dest.seen.map((s) => [s.headers["x-whc-attempt"], s.headers["x-whc-delivery-id"]])).toEqual([
      ["1", event.id],
      ["2", event.id],
    ]);
  });

  it("answers 502 forward_failed connection_refused when nothing listens at the destination, and keeps the capture", async () => {
    const dead = `http://127.0.0.1:${await freePort()}`;
    const ep = await createEndpoint(t, { operatingMode: "proxy", forward: { url: dead } });
    const res = await fetch(ep.webhookUrl, { method: "POST", body: "kept anyway" });
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({ error: "forward_failed", reason: "connection_refused" });
    const event = await newestEvent(t, ep);
    expect(event.body).toBe("kept anyway");
    expect(event.forwardedResponse.state).toBe("failed");
    expect(event.forwardedResponse.attempts?.map((a) => [a.n, a.status, a.error])).toEqual([[1, null, "connection_refused"]]);
    const answered = await waitFor(async () => {
      const again = await eventDetail(t, ep, event.id);
      return again.responseCode === 502 ? again : undefined;
    }, { what: "the 502 recorded on the event" });
    expect(answered.diagnostic.responseSource).toBe("forward_failed");
  });

  it("answers 504 forward_failed timeout when the destination is slower than timeoutMs", async () => {
    // Never answers; its connections are closed with the test's destinations.
    const dest = await serveDestination(() => undefined);
    const ep = await createEndpoint(t, { operatingMode: "proxy", forward: { url: dest.url, timeoutMs: 200 } });
    const res = await fetch(ep.webhookUrl, { method: "POST", body: "slow" });
    expect(res.status).toBe(504);
    expect(await res.json()).toEqual({ error: "forward_failed", reason: "timeout" });
    expect(dest.seen).toHaveLength(1);
    const event = await newestEvent(t, ep);
    expect(event.body).toBe("slow");
    expect(event.forwardedResponse.attempts?.map((a) => [a.n, a.error])).toEqual([[1, "timeout"]]);
  });

  it("counts its answers as proxied or forward_failed in ingest's metrics", async () => {
    const metric = async (outcome: string) => {
      const text = await (await fetch(`${t.metricsUrl}/metrics`)).text();
      return Number(new RegExp(`^whc_ingest_requests_total\\{outcome="${outcome}"\\} (\\S+)$`, "m").exec(text)?.[1]);
    };
    const before = { proxied: await metric("proxied"), failed: await metric("forward_failed"), stored: await metric("stored") };
    const dest = await serveDestination((res) => res.end("ok"));
    const ok = await createEndpoint(t, { operatingMode: "proxy", forward: { url: dest.url } });
    const dead = await createEndpoint(t, { operatingMode: "proxy", forward: { url: `http://127.0.0.1:${await freePort()}` } });
    expect((await fetch(ok.webhookUrl, { method: "POST", body: "a" })).status).toBe(200);
    expect((await fetch(dead.webhookUrl, { method: "POST", body: "b" })).status).toBe(502);
    expect(await metric("proxied")).toBe(before.proxied + 1);
    expect(await metric("forward_failed")).toBe(before.failed + 1);
    expect(await metric("stored")).toBe(before.stored);
  });

  it("does not forward a capture over the inbound limit: 413, metadata stored, destination untouched", async () => {
    const dest = await serveDestination((res) => res.end());
    const ep = await createEndpoint(t, { operatingMode: "proxy", forward: { url: dest.url } });
    const res = await fetch(ep.webhookUrl, { method: "POST", body: Buffer.alloc(70_000, 0x62) });
    expect(res.status).toBe(413);
    const event = await newestEvent(t, ep);
    expect(event.forwardedResponse).toEqual({});
    expect(dest.seen).toHaveLength(0);
  });
});

describe("a proxy endpoint whose destination the egress guard refuses", () => {
  it("answers 502 forward_failed target_not_allowed once private targets are no longer allowed, and sends nothing", async () => {
    const data = tempDir("whc-proxy-guard-");
    const trap = await serveDestination((res) => res.end("must not be reached"));
    let system = await startTestSystem({ WHC_DATA_DIR: data.path, WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true" });
    let ep: Ep;
    try {
      ep = await createEndpoint(system, { operatingMode: "proxy", forward: { url: trap.url } });
    } finally {
      await system.stop();
    }
    // The same data directory, restarted with the default: loopback destinations refused at send.
    system = await startTestSystem({ WHC_DATA_DIR: data.path });
    try {
      const res = await fetch(`${system.ingestUrl}/h/${ep.id}`, { method: "POST", body: "x" });
      expect(res.status).toBe(502);
      expect(await res.json()).toEqual({ error: "forward_failed", reason: "target_not_allowed" });
      expect(trap.seen).toHaveLength(0);
      const event = await newestEvent(system, ep);
      expect(event.forwardedResponse.attempts?.map((a) => [a.n, a.error])).toEqual([[1, "target_not_allowed"]]);
    } finally {
      await system.stop();
      data.remove();
    }
  });
});

describe("a proxy endpoint while the replay service cannot be reached", () => {
  it("answers 502 forward_failed service_unavailable, and the capture is stored", async () => {
    const dir = tempDir("whc-proxy-down-");
    const logger = createLogger("test", "silent");
    const config = loadConfig(allInOneSpec, { WHC_DATA_DIR: dir.path, WHC_LOG_LEVEL: "silent" });
    const catalog = await createCatalogNode(config, logger);
    const crypto = createCryptoNode(config, logger);
    const bus = createBus(undefined, "test", logger);
    const peers = {
      catalog: createInMemoryTransport(catalog.routes, logger, 5000),
      crypto: createInMemoryTransport(crypto.routes, logger, 5000),
      // Nothing listens there.
      replay: createPeerTransport(`http://127.0.0.1:${await freePort()}`, 5000, undefined),
    };
    const ingest = await createIngestNode(config, peers, bus, logger).serve(0, "127.0.0.1");
    try {
      const created = await createServiceClient(CatalogService, peers.catalog).createEndpoint({
        endpoint: {
          accountId: "acct-a",
          slug: "proxy-down",
          displayName: "proxy down",
          operatingMode: "proxy",
          status: "active",
          forwardJson: JSON.stringify({ url: "http://127.0.0.1:9/unused", keepPath: true, timeoutMs: 1000, maxAttempts: 1 }),
        },
      });
      const id = created.endpoint?.id as string;
      const res = await fetch(`http://127.0.0.1:${ingest.port}/h/${id}`, { method: "POST", body: "stored" });
      expect(res.status).toBe(502);
      expect(await res.json()).toEqual({ error: "forward_failed", reason: "service_unavailable" });
      const listed = await catalog.client.listEvents({ accountId: "acct-a", endpointId: id, limit: 10 });
      expect(listed.events).toHaveLength(1);
      const { event } = await catalog.client.getEvent({ accountId: "acct-a", endpointId: id, eventId: listed.events[0]?.id ?? "", markRead: false });
      expect(Buffer.from(event?.body?.ciphertext ?? []).length).toBeGreaterThan(0);
      // Pending, not in the outbox: the proxy's one attempt was never made. Its target is
      // stored sealed under the capture's key (it may carry the sub-path and query, ADR 0009).
      expect(event?.forward?.target).not.toContain("127.0.0.1");
      const opener = createEnvelopeOpener(createServiceClient(CryptoService, peers.crypto), { maxAgeMs: 60_000, maxEntries: 10 });
      const opened = (await openCapture(opener, event!)).event;
      expect(opened.forward).toMatchObject({ state: "pending", target: "http://127.0.0.1:9/unused", attempts: [] });
      expect(event?.forward?.nextAttemptAtMs).toBeUndefined();
    } finally {
      await ingest.close();
      await bus.close();
      await catalog.closeable.close();
      dir.remove();
    }
  });
});
