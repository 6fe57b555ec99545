import { afterAll, beforeAll, describe, expect, it } from "vitest";
import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { loadConfig } from "@whc/config";
import { CatalogService, CryptoService } from "@whc/contracts";
import { createLogger } from "@whc/logging";
import { createInMemoryTransport, createServiceClient, serveH2c } from "@whc/rpc";
import { createEnvelopeSealer } from "@whc/sealing";
import { appendCaptures, freePort, startNatsServer, tempDir, waitFor, type NatsServer } from "@whc/testing";
import { startTestSystem, type TestSystem } from "./testing/index.js";
import { allInOneSpec } from "./specs.js";
import { createBus, createCatalogNode, createCryptoNode, createLeases, createReplayNode } from "./nodes.js";
import { serveMetrics } from "./metrics-port.js";

/**
 * The replay node's forwarding as composed: the outbox worker the all-in-one process starts
 * with its settings, the replay process's metrics, and two replay nodes sharing one catalog
 * over NATS (bus wake-ups and egress leases).
 */

const logger = createLogger("forwarding-test", "silent");

interface Seen {
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A local destination answering the given statuses in turn (the last one from then on). */
async function destination(...statuses: number[]) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      seen.push({ url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks) });
      res.statusCode = statuses[Math.min(seen.length - 1, statuses.length - 1)] ?? 200;
      res.end(`answer ${seen.length}`);
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

interface Forwarded {
  state?: string;
  attempts?: { n: number; trigger: string; status: number | null; bodyBase64: string }[];
}

describe("the all-in-one process", () => {
  let t: TestSystem;
  beforeAll(async () => {
    t = await startTestSystem({ WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true", WHC_FORWARD_RETRY_BASE_MS: "20", WHC_FORWARD_POLL_MS: "50" });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it("retries a relay delivery with WHC_FORWARD_RETRY_BASE_MS until delivered, and redelivers on request", async () => {
    const dest = await destination(500, 500, 200);
    try {
      const ep = (await t.a.post("/v1/endpoints", { operatingMode: "relay", forward: { url: `${dest.url}/in` } })).body as { id: string; webhookUrl: string };
      const captured = await fetch(`${ep.webhookUrl}/ci?x=1`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"n":1}' });
      expect(captured.status).toBe(200);
      const { id } = (await captured.json()) as { id: string };

      const delivered = await waitFor(
        async () => {
          const f = (await t.a.get(`/v1/endpoints/${ep.id}/events/${id}`)).body.forwardedResponse as Forwarded;
          return f.state === "delivered" ? f : undefined;
        },
        { what: "the relay delivery" },
      );
      expect(delivered.attempts?.map((a) => [a.n, a.trigger, a.status])).toEqual([
        [1, "initial", 500],
        [2, "retry", 500],
        [3, "retry", 200],
      ]);
      expect(dest.seen.map((s) => [s.url, s.headers["x-whc-attempt"], s.headers["x-whc-delivery-id"]])).toEqual([
        ["/in/ci?x=1", "1", id],
        ["/in/ci?x=1", "2", id],
        ["/in/ci?x=1", "3", id],
      ]);

      const again = await t.a.post(`/v1/endpoints/${ep.id}/events/${id}/redeliver`, {});
      expect(again.status, again.text).toBe(200);
      expect(again.body).toMatchObject({ n: 4, trigger: "manual", status: 200 });
      expect(dest.seen[3]?.headers["x-whc-attempt"]).toBe("4");

      // The all-in-one process's metrics port carries the forward series of the replay in it.
      const metrics = await (await fetch(`${t.metricsUrl}/metrics`)).text();
      expect(metrics).toContain('whc_forward_attempts_total{trigger="initial",outcome="rejected"} 1');
      expect(metrics).toContain('whc_forward_attempts_total{trigger="retry",outcome="delivered"} 1');
      expect(metrics).toContain('whc_forward_attempts_total{trigger="manual",outcome="delivered"} 1');
      expect(metrics).toContain('whc_forward_deliveries_total{state="delivered"}');
      expect(metrics).toContain("whc_forward_outbox_pending 0");
      expect(metrics).toContain("whc_http_requests_total");
    } finally {
      await dest.close();
    }
  });
});

/** GET over h2c (prior knowledge), as the replay process serves. */
async function h2Get(port: number, path: string): Promise<{ status: number; type: string; text: string }> {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  try {
    return await new Promise((resolve, reject) => {
      const req = session.request({ ":method": "GET", ":path": path });
      let status = 0;
      let type = "";
      const chunks: Buffer[] = [];
      req.on("response", (headers) => {
        status = Number(headers[":status"]);
        type = String(headers["content-type"] ?? "");
      });
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => resolve({ status, type, text: Buffer.concat(chunks).toString() }));
      req.on("error", reject);
      req.end();
    });
  } finally {
    session.close();
  }
}

describe("replay nodes (distributed mode)", () => {
  let nats: NatsServer;
  beforeAll(async () => {
    nats = await startNatsServer();
  });
  afterAll(async () => {
    await nats?.stop();
  });

  /** One catalog and crypto node, and `count` replay nodes each with its own NATS bus and leases. */
  async function startNodes(count: number) {
    const dir = tempDir("whc-forwarding-");
    const config = loadConfig(allInOneSpec, {
      WHC_DATA_DIR: dir.path,
      WHC_NATS_URL: nats.url,
      WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true",
      WHC_FORWARD_RETRY_BASE_MS: "20",
      // Only the wake-up (over NATS) makes the first attempts quick.
      WHC_FORWARD_POLL_MS: "60000",
      WHC_LOG_LEVEL: "silent",
    });
    const catalog = await createCatalogNode(config, logger);
    const crypto = createCryptoNode(config, logger);
    const inner = { catalog: createInMemoryTransport(catalog.routes, logger, 5000), crypto: createInMemoryTransport(crypto.routes, logger, 5000) };
    const buses = [createBus(config.natsUrl, "test-ingest", logger)];
    const replays: ReturnType<typeof createReplayNode>[] = [];
    for (let i = 0; i < count; i += 1) {
      const bus = createBus(config.natsUrl, `test-replay-${i}`, logger);
      buses.push(bus);
      replays.push(createReplayNode(config, inner, createLeases(config, `test-replay-${i}`, logger), bus, logger));
    }
    const sealer = createEnvelopeSealer(createServiceClient(CryptoService, inner.crypto), { maxAgeMs: 60_000, maxUses: 1000 });
    const client = createServiceClient(CatalogService, inner.catalog);
    return {
      catalog: client,
      wake: () => buses[0]!.publishOutboxWake(),
      replays,
      /** Appends relay captures the way ingest does: sealed bodies, deliveries in the outbox. */
      async relay(url: string, n: number) {
        const { endpoint } = await client.createEndpoint({
          endpoint: { accountId: "acct-a", slug: `relay-${Date.now()}`, displayName: "relay", operatingMode: "relay", status: "active", forwardJson: JSON.stringify({ url }) },
        });
        const ep = endpoint!;
        // Every first attempt fails here: a breaker at its default 5 would open and hold the rest
        // (design §18), which is not what this test is about. Its one destination, under the
        // endpoint's id as part two's forward had it, with the breaker set above what is sent.
        await client.updateEndpoint({
          accountId: "acct-a",
          endpointId: ep.id,
          patch: { forwardJson: JSON.stringify([{ id: ep.id, name: "destination-1", url, breaker: { failures: 100, probeAfterMs: 30_000 } }]) },
        });
        const inputs = Array.from({ length: n }, (_, i) => ({
          accountId: "acct-a",
          endpointId: ep.id,
          body: `{"i":${i}}`,
          forwardTarget: url,
          forwardScheduled: true,
        }));
        const appended = await appendCaptures(client, sealer, inputs);
        return appended.map((e) => ({ accountId: "acct-a", endpointId: ep.id, eventId: e.id }));
      },
      async close() {
        for (const r of replays) await r.closeable.close();
        for (const b of buses) await b.close();
        await catalog.closeable.close();
        dir.remove();
      },
    };
  }

  it("two replay nodes on one NATS share the outbox: woken over the bus, every attempt sent once", async () => {
    const nodes = await startNodes(2);
    // Every event's first attempt fails: 503 then 200 per event, whichever node sends it.
    const perEvent = new Map<string, number>();
    const sent: string[] = [];
    const answering = http.createServer((req, res) => {
      const id = String(req.headers["x-whc-delivery-id"]);
      sent.push(`${id} ${String(req.headers["x-whc-attempt"])}`);
      const n = (perEvent.get(id) ?? 0) + 1;
      perEvent.set(id, n);
      req.resume();
      req.on("end", () => {
        res.statusCode = n === 1 ? 503 : 200;
        res.end();
      });
    });
    await new Promise<void>((r) => answering.listen(0, "127.0.0.1", r));
    let waking: NodeJS.Timeout | undefined;
    try {
      const url = `http://127.0.0.1:${(answering.address() as AddressInfo).port}/`;
      const refs = await nodes.relay(url, 30);
      // The bus is best effort (a wake-up sent before a node's subscription reached NATS is
      // lost, and polling is a minute here), so the test wakes them until they are done.
      waking = setInterval(() => nodes.wake(), 250);
      nodes.wake();
      for (const ref of refs) {
        const forward = await waitFor(
          async () => {
            const f = (await nodes.catalog.getEvent({ ...ref, markRead: false })).event?.deliveries[0];
            return f?.state === "delivered" ? f : undefined;
          },
          { what: "every delivery" },
        );
        expect(forward.attempts.map((a) => [a.n, a.status])).toEqual([
          [1, 503],
          [2, 200],
        ]);
      }
      expect(sent).toHaveLength(60);
      expect(new Set(sent).size).toBe(60);
      expect(nodes.replays[0]!.forwarder.owner).not.toBe(nodes.replays[1]!.forwarder.owner);
    } finally {
      clearInterval(waking);
      answering.closeAllConnections();
      answering.close();
      await nodes.close();
    }
  });

  it("serves the forward series and the process's own on the metrics port, and no /metrics on the replay server's", async () => {
    const nodes = await startNodes(1);
    const replay = nodes.replays[0]!;
    const server = await serveH2c({ routes: replay.routes, port: 0, host: "127.0.0.1", logger, credentials: undefined });
    const metricsPort = await serveMetrics({ metricsPort: await freePort(), internalHost: "127.0.0.1" }, [replay.registry], logger);
    try {
      const scraped = await fetch(`http://127.0.0.1:${metricsPort!.port}/metrics`);
      expect(scraped.status).toBe(200);
      expect(scraped.headers.get("content-type")).toContain("text/plain");
      const text = await scraped.text();
      expect(text).toContain('whc_forward_attempts_total{trigger="initial",outcome="delivered"} 0');
      expect(text).toContain("whc_forward_outbox_pending 0");
      expect(text).toContain("process_cpu_user_seconds_total");
      expect((await fetch(`http://127.0.0.1:${metricsPort!.port}/elsewhere`)).status).toBe(404);
      expect((await h2Get(server.port, "/metrics")).status).toBe(404);
      expect((await fetch(`http://127.0.0.1:${server.port}/metrics`)).status).toBe(404);
    } finally {
      await metricsPort?.close();
      await server.close();
      await nodes.close();
    }
  });
});
