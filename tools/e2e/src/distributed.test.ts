import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { createHash } from "node:crypto";
import { connect, JSONCodec, type NatsConnection } from "nats";
import { waitFor } from "@whc/testing";
import { walkReadmePath } from "./walkthrough.js";
import { CLUSTER_KEY, scaleOut, startCluster, type Cluster, type Replicas } from "./cluster.js";

let cluster: Cluster;
let replicas: Replicas;
beforeAll(async () => {
  cluster = await startCluster();
  // Two catalogs (one store), two ingests and two gateways, each pair on its own catalog.
  replicas = await scaleOut(cluster, 2);
});
afterAll(async () => {
  await cluster?.shutdown();
});

describe("distributed processes (five services, two catalogs, ingests and gateways; Connect over h2c, NATS)", () => {
  it("walk the README path round two gateways, two ingests and two catalogs, and ingest publishes the capture on NATS", async () => {
    let nc: NatsConnection | undefined;
    try {
      nc = await connect({ servers: cluster.nats.url });
      const codec = JSONCodec<{ id: string; endpointId: string; method: string }>();
      const seen: { subject: string; data: { id: string; endpointId: string; method: string } }[] = [];
      nc.subscribe("whc.capture.>", { callback: (_e, m) => seen.push({ subject: m.subject, data: codec.decode(m.data) }) });
      await nc.flush();
      const { endpoint, eventId } = await walkReadmePath(cluster.api, replicas);
      await waitFor(() => seen.length > 0, { what: "capture notification" });
      expect(seen[0]!.subject).toMatch(new RegExp(`^whc\\.capture\\.[0-9a-f-]{36}\\.${endpoint.id}$`));
      expect(seen[0]!.data).toMatchObject({ id: eventId, endpointId: endpoint.id, method: "POST" });
      expect(JSON.stringify(seen[0]!.data)).not.toContain("zebracorn");
    } finally {
      await nc?.close();
    }
  });

  it("take a scoped key made through one gateway at the other, and audit what it does through the other catalog", async () => {
    const [first, second] = replicas.apis as [(typeof replicas.apis)[0], (typeof replicas.apis)[0]];
    const ep = (await first.post("/v1/endpoints", { slug: "scoped-across" })).body as { id: string; webhookUrl: string };
    const made = await first.post("/v1/keys", { name: "reader", scopes: ["endpoints:read", "events:read"], endpointIds: [ep.id] });
    expect(made.status).toBe(201);
    const reader = made.body as { id: string; key: string };

    const captured = (await (await fetch(`${replicas.ingestUrls[1]}/h/${ep.id}`, { method: "POST", body: '{"type":"across"}' })).json()) as { id: string };
    const read = await second.get(`/v1/endpoints/${ep.id}/events/${captured.id}`, { key: reader.key, headers: { "x-request-id": "scoped-read-1" } });
    expect([read.status, read.body.canonicalEventType]).toEqual([200, "across"]);
    // Stored whole, its hash is the reading gateway's to give (design §12), and is the bytes sent.
    expect(read.body.diagnostic.bodySha256).toBe(createHash("sha256").update('{"type":"across"}').digest("hex"));
    const refused = await second.post("/v1/endpoints", {}, { key: reader.key });
    expect([refused.status, refused.body.error]).toEqual([403, "forbidden"]);

    // Written by the second catalog with the read, read back through the first.
    const log = (await first.get(`/v1/audit?keyId=${reader.id}`)).body.items as { action: string; eventId: string; requestId: string }[];
    expect(log.map((e) => [e.action, e.eventId, e.requestId])).toEqual([["event.read", captured.id, "scoped-read-1"]]);
    expect((await second.get("/v1/audit?action=key.created")).body.items[0].details).toMatchObject({ id: reader.id, name: "reader" });

    expect((await second.delete(`/v1/keys/${reader.id}`)).status).toBe(204);
    expect((await first.get(`/v1/endpoints/${ep.id}`, { key: reader.key })).status).toBe(401);
  });

  it("report every dependency healthy", async () => {
    const health = (await (await fetch(`${cluster.gatewayUrl}/healthz`)).json()) as { checks: Record<string, string> };
    expect(health.checks).toEqual({ catalog: "ok", crypto: "ok", replay: "ok", bus: "ok" });
  });

  it("log no API key, secret or body, while logging every request with its id", async () => {
    const secret = "whsec_e2e_log_secret_value";
    const ep = (await cluster.api.post("/v1/endpoints", { provider: "stripe", secret })).body as { id: string; webhookUrl: string };
    await fetch(`${ep.webhookUrl}?token=querytoken123`, {
      method: "POST",
      headers: { authorization: "Bearer sender-credential-xyz", "stripe-signature": "t=1,v1=00" },
      body: '{"type":"charge.succeeded","note":"platypusbodyword"}',
    });
    await cluster.api.get(`/v1/endpoints/${ep.id}/events?search=platypusbodyword`, { headers: { "x-request-id": "trace-logs-1" } });
    await cluster.api.get(`/v1/endpoints/${ep.id}/events/01a20000-0000-7000-8000-000000000000`);
    await new Promise((r) => setTimeout(r, 300));
    const logs = Object.values(cluster.procs).map((p) => p.output()).join("\n");
    for (const leaked of [CLUSTER_KEY, secret, "platypusbodyword", "sender-credential-xyz", "querytoken123"]) {
      expect(logs).not.toContain(leaked);
    }
    const lines = logs.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>);
    const traced = lines.filter((l) => l.requestId === "trace-logs-1");
    expect(traced.some((l) => l.service === "gateway" && l.msg === "request" && l.status === 200)).toBe(true);
  });

  it("drain and exit 0 on SIGTERM", async () => {
    expect(await cluster.stop("gateway", "SIGTERM")).toBe(0);
    expect(cluster.procs.gateway.output()).toContain("gateway stopped");
    await cluster.start("gateway");
  });

  it("answer a response sequence 500, 500, 200 across two ingest processes, as one sequence", async () => {
    const second = await cluster.extra("ingest");
    const created = await cluster.api.post("/v1/endpoints", { slug: "sequence-two-ingests" });
    expect(created.status).toBe(201);
    const { id } = created.body as { id: string };
    const set = await cluster.api.call("PATCH", `/v1/endpoints/${id}`, {
      json: { response: { sequence: [{ status: 500 }, { status: 500 }, { status: 200 }] } },
    });
    expect(set.status).toBe(200);
    // A sender retrying until it gets a 2xx, its attempts spread over both ingest processes.
    const seen: number[] = [];
    for (let attempt = 0; attempt < 6; attempt++) {
      const base = attempt % 2 === 0 ? cluster.ingestUrl : second.url;
      seen.push((await fetch(`${base}/h/${id}`, { method: "POST", body: `attempt ${attempt}` })).status);
    }
    expect(seen).toEqual([500, 500, 200, 500, 500, 200]);
    const listed = await cluster.api.get(`/v1/endpoints/${id}/events?limit=10`);
    expect(listed.body.items.map((e: { responseCode: number }) => e.responseCode).reverse()).toEqual(seen);
    await second.proc.stop();
  });

  it("pause and resume an endpoint, seen by ingest within a second (endpoint-change notice over NATS)", async () => {
    const created = await cluster.api.post("/v1/endpoints", { slug: "pause-over-nats" });
    const { id } = created.body as { id: string };
    const hook = `${cluster.ingestUrl}/h/${id}`;
    expect((await fetch(hook, { method: "POST" })).status).toBe(200);
    for (const [status, expected] of [
      ["paused", 503],
      ["active", 200],
    ] as const) {
      expect((await cluster.api.call("PATCH", `/v1/endpoints/${id}`, { json: { status } })).status).toBe(200);
      const changedAt = Date.now();
      await waitFor(async () => (await fetch(hook, { method: "POST" })).status === expected || undefined, {
        what: `ingest answering ${expected}`,
        timeoutMs: 1000,
      });
      expect(Date.now() - changedAt).toBeLessThan(1000);
    }
  });

  it("refuse a capture the inbound protection does not admit: 401/405 from either ingest, nothing stored, rejectedCount kept by the catalog", async () => {
    const created = await cluster.api.post("/v1/endpoints", { slug: "guarded", inbound: { headerToken: { name: "X-Hook-Token", value: "distributed-token" }, methods: ["POST"] } });
    expect(created.status).toBe(201);
    const { id } = created.body as { id: string };
    const ingests = [cluster.ingestUrl, replicas.ingestUrls[1]].filter((u): u is string => u !== undefined);
    for (const base of ingests) {
      const hook = `${base}/h/${id}`;
      expect((await fetch(hook, { method: "POST", body: "{}" })).status).toBe(401);
      const put = await fetch(hook, { method: "PUT", headers: { "x-hook-token": "distributed-token" }, body: "{}" });
      expect([put.status, put.headers.get("allow")]).toEqual([405, "POST"]);
      expect((await fetch(hook, { method: "POST", headers: { "x-hook-token": "distributed-token" }, body: "{}" })).status).toBe(200);
    }
    expect((await cluster.api.get(`/v1/endpoints/${id}/events`)).body.items).toHaveLength(ingests.length);
    const counted = await waitFor(async () => {
      const n = (await cluster.api.get(`/v1/endpoints/${id}`)).body.rejectedCount as number;
      return n === 2 * ingests.length ? n : undefined;
    }, { what: "rejectedCount from both ingests" });
    expect(counted).toBe(2 * ingests.length);
  });
});
