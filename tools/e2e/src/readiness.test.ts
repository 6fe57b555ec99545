import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { Health, HealthCheckResponse_ServingStatus as Status, ReplayService } from "@whc/contracts";
import { createPeerTransport, createServiceClient } from "@whc/rpc";
import { waitFor } from "@whc/testing";
import { startCluster, type Cluster, type Service } from "./cluster.js";

/**
 * Readiness tells the truth in a distributed deployment: /readyz on the gateway and ingest
 * names the dependency that is down (NATS, the catalog), replay's gRPC health says NOT_SERVING
 * while its catalog is gone, and every process that depends on it logs a warning naming it
 * at each check (every 200 ms here, WHC_DEPENDENCY_CHECK_MS; 10 s by default).
 */
let cluster: Cluster;

beforeAll(async () => {
  // It stops NATS: a private nats-server even where the run is given one.
  cluster = await startCluster({ WHC_DEPENDENCY_CHECK_MS: "200", WHC_RPC_TIMEOUT_MS: "3000" }, { ownNats: true });
});
afterAll(async () => {
  await cluster?.shutdown();
});

interface Ready {
  status: number;
  body: { status: string; checks: Record<string, string>; failing: string[] };
}

async function readyz(base: string): Promise<Ready> {
  const res = await fetch(`${base}/readyz`);
  return { status: res.status, body: (await res.json()) as Ready["body"] };
}

/** Both public ports' /readyz once `accept` holds for both. */
function bothReady(accept: (r: Ready) => boolean, what: string): Promise<Ready[]> {
  return waitFor(
    async () => {
      const answers = [await readyz(cluster.gatewayUrl), await readyz(cluster.ingestUrl)];
      return answers.every(accept) ? answers : undefined;
    },
    { what, timeoutMs: 15_000 },
  );
}

/** The JSON log lines of a service that warn `dependency down: <name>`, from `since` (an output length) on. */
function warnings(service: Service, dependency: string, since = 0): Record<string, unknown>[] {
  return cluster.procs[service]
    .output()
    .slice(since)
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.msg === `dependency down: ${dependency}`);
}

const outputLengths = () => Object.fromEntries((["gateway", "ingest", "replay"] as const).map((s) => [s, cluster.procs[s].output().length]));

describe("readiness of a distributed deployment", () => {
  it("is 200 on the gateway and ingest while every dependency answers, naming each", async () => {
    for (const base of [cluster.gatewayUrl, cluster.ingestUrl]) {
      const { status, body } = await readyz(base);
      expect(status).toBe(200);
      expect(body).toEqual({ status: "ok", checks: { catalog: "ok", crypto: "ok", replay: "ok", nats: "ok" }, failing: [] });
    }
  });

  it("is 503 naming nats while NATS is down, warned about in the logs of every service using it, and 200 once it is back", async () => {
    const since = outputLengths();
    await cluster.nats.pause();
    try {
      const down = await bothReady((r) => r.status === 503, "503 from both");
      for (const r of down) expect(r.body).toMatchObject({ status: "unavailable", failing: ["nats"], checks: { nats: "down", catalog: "ok" } });
      // Still alive: /healthz keeps its meaning (the services answer).
      expect((await fetch(`${cluster.gatewayUrl}/healthz`)).status).toBe(200);
      await waitFor(
        () => (["gateway", "ingest", "replay"] as const).every((s) => warnings(s, "nats", since[s]).length >= 2) || undefined,
        { what: "repeated warnings naming nats", timeoutMs: 15_000 },
      );
      expect(warnings("gateway", "nats", since.gateway)[0]).toMatchObject({ level: 40, service: "gateway", dependency: "nats" });
    } finally {
      await cluster.nats.resume();
    }
    await bothReady((r) => r.status === 200, "200 again");
    await waitFor(() => cluster.procs.gateway.output().includes('"msg":"dependency back: nats"') || undefined, { what: "back in the log" });
  });

  it("is 503 naming catalog while the catalog process is down; replay's own gRPC health is NOT_SERVING meanwhile", async () => {
    const since = outputLengths();
    const health = createServiceClient(Health, createPeerTransport(cluster.internalUrls.replay, 5000, cluster.credentials));
    // Replay's own NATS connections may still be coming back from the test before.
    await waitFor(async () => (await health.check({ service: "" })).status === Status.SERVING || undefined, { what: "replay serving" });
    await cluster.stop("catalog", "SIGKILL");
    try {
      const down = await bothReady((r) => r.status === 503, "503 from both");
      for (const r of down) {
        expect(r.body.failing).toEqual(["catalog"]);
        expect(r.body.checks).toEqual({ catalog: "down", crypto: "ok", replay: "ok", nats: "ok" });
      }
      await waitFor(async () => (await health.check({ service: "" })).status === Status.NOT_SERVING || undefined, { what: "replay not serving" });
      // Its own service still answers: callers name replay's dependencies themselves.
      expect((await health.check({ service: ReplayService.typeName })).status).toBe(Status.SERVING);
      await waitFor(
        () => (["gateway", "ingest", "replay"] as const).every((s) => warnings(s, "catalog", since[s]).length >= 2) || undefined,
        { what: "repeated warnings naming catalog", timeoutMs: 15_000 },
      );
    } finally {
      await cluster.start("catalog");
    }
    await bothReady((r) => r.status === 200, "200 again");
    expect((await health.check({ service: "" })).status).toBe(Status.SERVING);
  });
});
