/**
 * Ingest as a service: its handler on a real node:http server, over in-memory transports to a
 * real catalog service (SQLite in memory) and a real crypto service, with the memory bus. What a
 * sender sees and what the catalog then holds, with no other service of the deployment around.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { CatalogService, CryptoService, Health } from "@whc/contracts";
import { createCatalogService } from "@whc/catalog-core";
import { openSqliteStore } from "@whc/catalog-sqlite";
import { createCryptoService, createKeyRing } from "@whc/crypto-core";
import { createLogger } from "@whc/logging";
import { createMemoryBus } from "@whc/messaging";
import { createInMemoryTransport, createServiceClient, healthRoutes } from "@whc/rpc";
import { createBlindIndexSource, createEnvelopeOpener, createEnvelopeSealer, openCapture } from "@whc/sealing";
import { Code, ConnectError, type Transport } from "@connectrpc/connect";
import { createAppendBatcher } from "./batcher.js";
import { createEndpointCache } from "./endpoint-cache.js";
import { createIngestMetrics } from "./metrics.js";
import { createRejectionCounter } from "./rejections.js";
import { createIngestHandler } from "./server.js";
import type { ReplayForwarder } from "./proxy.js";

const ACCOUNT = "acct-ingest";
const logger = createLogger("ingest-test", "silent");

/** A transport whose every call fails as an unreachable peer's does while `isDown()`: the catalog process gone. */
function downTransport(up: Transport, isDown: () => boolean): Transport {
  return {
    unary(method, signal, timeoutMs, header, input, contextValues) {
      if (isDown()) return Promise.reject(new ConnectError("connect ECONNREFUSED", Code.Unavailable));
      return up.unary(method, signal, timeoutMs, header, input, contextValues);
    },
    stream: up.stream.bind(up),
  };
}

let server: http.Server;
let base: string;
let catalogDown = false;
const store = openSqliteStore({ file: ":memory:" });
const ring = createKeyRing([{ id: "k1", key: randomBytes(32) }], randomBytes(32));
const catalogRoutes = (router: Parameters<Parameters<typeof createInMemoryTransport>[0]>[0]) => {
  router.service(CatalogService, createCatalogService(store, { endpointQuota: 100, listeners: { ttlMs: 60_000 } }));
  healthRoutes({ "": () => true })(router);
};
const cryptoRoutes = (router: Parameters<Parameters<typeof createInMemoryTransport>[0]>[0]) => {
  router.service(CryptoService, createCryptoService(ring));
  healthRoutes({ "": () => true })(router);
};
const catalogTransport = createInMemoryTransport(catalogRoutes, logger, 5000);
const cryptoTransport = createInMemoryTransport(cryptoRoutes, logger, 5000);
const catalog = createServiceClient(CatalogService, catalogTransport);
const crypto = createServiceClient(CryptoService, cryptoTransport);
const opener = createEnvelopeOpener(crypto, { maxAgeMs: 60_000, maxEntries: 10 });
const forwarded: unknown[] = [];
const replay = {
  forward: (req: unknown) => {
    forwarded.push(req);
    return Promise.reject(new Error("no proxy endpoint in this test"));
  },
} as unknown as ReplayForwarder;

async function createEndpoint(fields: { slug: string; status?: string }) {
  const { endpoint } = await catalog.createEndpoint({
    endpoint: { accountId: ACCOUNT, slug: fields.slug, displayName: fields.slug, operatingMode: "capture", status: fields.status ?? "active" },
  });
  return endpoint!;
}

async function storedEvents(endpointId: string) {
  const { events } = await catalog.listEvents({ accountId: ACCOUNT, endpointId, limit: 10 });
  return events;
}

beforeAll(async () => {
  const ingestCatalog = createServiceClient(CatalogService, downTransport(catalogTransport, () => catalogDown));
  const metrics = createIngestMetrics();
  const handler = createIngestHandler(
    {
      endpoints: createEndpointCache(ingestCatalog, crypto, { ttlMs: 5000, missTtlMs: 1000, maxEntries: 100 }),
      batcher: createAppendBatcher(ingestCatalog, { maxEvents: 512, maxBytes: 8 * 1024 * 1024, onBatch: (n) => metrics.batch(n), lingerMs: 0, encodeCaptures: false }),
      sealer: createEnvelopeSealer(crypto, { maxAgeMs: 60_000, maxUses: 1000 }),
      blindIndex: createBlindIndexSource(crypto),
      bus: createMemoryBus(),
      replay,
      catalog: ingestCatalog,
      health: { catalog: createServiceClient(Health, catalogTransport), crypto: createServiceClient(Health, cryptoTransport) },
      readiness: { check: async () => ({ status: "ok", checks: {}, failing: [] }) },
      metrics,
      rejections: createRejectionCounter(ingestCatalog, logger),
      logger,
    },
    {
      maxStoredBodyBytes: 1024 * 1024,
      maxInboundBodyBytes: 2 * 1024 * 1024,
      maxInflightBytes: 16 * 1024 * 1024,
      maxInflightBytesPerPeer: 4 * 1024 * 1024,
      maxInflightBytesPerEndpoint: 8 * 1024 * 1024,
      bodyIdleMs: 10_000,
      trustedProxies: new Set(),
      secretGraceMs: 0,
      maxHops: 3,
      publicUrl: "http://127.0.0.1",
    },
  );
  server = http.createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await store.close();
});

describe("ingest as a service, over in-memory transports", () => {
  it("answers 200 once the capture is stored: body, headers in order, sub-path, query and event type as sent", async () => {
    const ep = await createEndpoint({ slug: "exact" });
    const body = '{"type":"invoice.paid","amount":42}';
    const res = await fetch(`${base}/h/${ep.id}/hooks/a?x=1`, {
      method: "POST",
      headers: [
        ["Content-Type", "application/json"],
        ["X-Custom", "one"],
      ],
      body,
    });
    expect(res.status).toBe(200);
    const [summary] = await storedEvents(ep.id);
    expect(summary).toMatchObject({ method: "POST", canonicalEventType: "invoice.paid", responseCode: 200, remoteIp: "127.0.0.1" });
    const { event } = await catalog.getEvent({ accountId: ACCOUNT, endpointId: ep.id, eventId: summary!.id });
    const opened = await openCapture(opener, event!);
    expect(opened.decryption).toBe("ok");
    expect(Buffer.from(opened.body!).toString()).toBe(body);
    expect(opened.event.path).toBe("/hooks/a?x=1");
    // Names as sent, in the order sent (repeats are ingest.test.ts's, over a raw socket).
    const names = opened.event.headers.map((h) => h.name);
    expect(names.indexOf("Content-Type")).toBeLessThan(names.indexOf("X-Custom"));
    expect(opened.event.headers.find((h) => h.name === "X-Custom")?.value).toBe("one");
    // Sealed at rest: the catalog's own copy does not hold the body's bytes.
    expect(Buffer.from(event!.body!.ciphertext).includes(Buffer.from("invoice.paid"))).toBe(false);
  });

  it("answers an unknown endpoint 404 and a paused one 503, storing neither", async () => {
    const unknown = await fetch(`${base}/h/0190b6a0-0000-7000-8000-000000000009`, { method: "POST", body: "x" });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ ok: false, error: "not_found" });
    const paused = await createEndpoint({ slug: "paused", status: "paused" });
    const res = await fetch(`${base}/h/${paused.id}`, { method: "POST", body: "x" });
    expect(res.status).toBe(503);
    expect(await storedEvents(paused.id)).toHaveLength(0);
  });

  it("answers a capture that arrives with too many forwards behind it 508 forward_loop, and stores it", async () => {
    const ep = await createEndpoint({ slug: "hops" });
    const res = await fetch(`${base}/h/${ep.id}`, { method: "POST", headers: { "X-Whc-Hop": "3" }, body: "{}" });
    expect(res.status).toBe(508);
    expect(await res.json()).toMatchObject({ ok: false, error: "forward_loop" });
    const [stored] = await storedEvents(ep.id);
    expect(stored?.responseCode).toBe(508);
    expect(forwarded).toHaveLength(0);
  });

  it("never answers 2xx while the catalog cannot store: 503 with Retry-After, then 200 once it is back", async () => {
    const ep = await createEndpoint({ slug: "outage" });
    // Known to the endpoint cache before the outage, as a running ingest would be.
    expect((await fetch(`${base}/h/${ep.id}`, { method: "POST", body: "before" })).status).toBe(200);
    catalogDown = true;
    try {
      const res = await fetch(`${base}/h/${ep.id}`, { method: "POST", body: "during" });
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
    } finally {
      catalogDown = false;
    }
    expect((await fetch(`${base}/h/${ep.id}`, { method: "POST", body: "after" })).status).toBe(200);
    expect(await storedEvents(ep.id)).toHaveLength(2);
  });
});
