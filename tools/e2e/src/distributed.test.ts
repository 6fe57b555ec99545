import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { connect, JSONCodec, type NatsConnection } from "nats";
import { waitFor } from "@whc/testing";
import { walkReadmePath } from "./walkthrough.js";
import { startCluster, type Cluster } from "./cluster.js";

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

  it("drain and exit 0 on SIGTERM", async () => {
    expect(await cluster.stop("gateway", "SIGTERM")).toBe(0);
    expect(cluster.procs.gateway.output()).toContain("gateway stopped");
    await cluster.start("gateway");
  });
});
