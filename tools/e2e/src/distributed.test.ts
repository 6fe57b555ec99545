import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { connect, JSONCodec, type NatsConnection } from "nats";
import { waitFor } from "@whc/testing";
import { walkReadmePath } from "./walkthrough.js";
import { CLUSTER_KEY, startCluster, type Cluster } from "./cluster.js";

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster();
});
afterAll(async () => {
  await cluster?.shutdown();
});

describe("distributed processes (five services, Connect over h2c, NATS)", () => {
  it("walk the README path, and ingest publishes the capture on NATS", async () => {
    let nc: NatsConnection | undefined;
    try {
      nc = await connect({ servers: cluster.nats.url });
      const codec = JSONCodec<{ id: string; endpointId: string; method: string }>();
      const seen: { subject: string; data: { id: string; endpointId: string; method: string } }[] = [];
      nc.subscribe("whc.capture.>", { callback: (_e, m) => seen.push({ subject: m.subject, data: codec.decode(m.data) }) });
      await nc.flush();
      const { endpoint, eventId } = await walkReadmePath(cluster.api);
      await waitFor(() => seen.length > 0, { what: "capture notification" });
      expect(seen[0]!.subject).toMatch(new RegExp(`^whc\\.capture\\.[0-9a-f-]{36}\\.${endpoint.id}$`));
      expect(seen[0]!.data).toMatchObject({ id: eventId, endpointId: endpoint.id, method: "POST" });
      expect(JSON.stringify(seen[0]!.data)).not.toContain("zebracorn");
    } finally {
      await nc?.close();
    }
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
});
