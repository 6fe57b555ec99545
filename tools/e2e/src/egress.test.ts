import { describe, it, expect, beforeAll, afterAll } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { CatalogService, ReplayService } from "@whc/contracts";
import { createPeerTransport, createServiceClient } from "@whc/rpc";
import { hashApiKey } from "@whc/identity";
import { AppError } from "@whc/errors";
import { buildApps, freePort, startNode, waitFor, type RunningProcess } from "@whc/testing";
import { CLUSTER_KEY, startCluster, type Cluster } from "./cluster.js";

let cluster: Cluster;
let second: RunningProcess;
let secondUrl: string;
let slow: http.Server;
let slowUrl: string;
let inFlight = 0;
let hits = 0;

beforeAll(async () => {
  cluster = await startCluster({
    WHC_EGRESS_SLOTS_PER_ORIGIN: "1",
    WHC_EGRESS_LEASE_TTL_S: "2",
    WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true",
    WHC_REPLAY_TIMEOUT_MS: "8000",
  });
  const port = await freePort();
  secondUrl = `http://127.0.0.1:${port}`;
  second = startNode(buildApps("replay").replay!, { ...cluster.env, WHC_REPLAY_PORT: String(port) });
  await second.waitForOutput(/replay ready/);
  slow = http.createServer((req, res) => {
    hits += 1;
    inFlight += 1;
    req.resume();
    setTimeout(() => {
      inFlight -= 1;
      res.end("slow ok");
    }, 1500);
  });
  await new Promise<void>((r) => slow.listen(0, "127.0.0.1", r));
  slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/slow`;
});

afterAll(async () => {
  await second?.stop();
  slow?.close();
  await cluster?.shutdown();
});

describe("egress leases shared by two replay processes over NATS KV", () => {
  it("lets exactly one replay through a one-slot origin; the other is refused and not charged", async () => {
    const catalog = createServiceClient(CatalogService, createPeerTransport(cluster.env.WHC_CATALOG_URL!, 5000, cluster.credentials));
    const { accountId } = await catalog.authenticateApiKey({ keyHash: hashApiKey(CLUSTER_KEY) });
    const ep = (await cluster.api.post("/v1/endpoints", {})).body as { id: string; webhookUrl: string };
    const { id } = (await (await fetch(ep.webhookUrl, { method: "POST", body: "payload" })).json()) as { id: string };
    const day = new Date().toISOString().slice(0, 10);
    const usedBefore = (await catalog.getReplayUsage({ accountId, day })).used;

    const one = createServiceClient(ReplayService, createPeerTransport(cluster.env.WHC_REPLAY_URL!, 20_000, cluster.credentials));
    const two = createServiceClient(ReplayService, createPeerTransport(secondUrl, 20_000, cluster.credentials));
    const request = { accountId, endpointId: ep.id, eventId: id, targetUrl: slowUrl, client: "api" };
    const outcomes = await Promise.allSettled([one.replayEvent(request), two.replayEvent(request)]);

    const delivered = outcomes.filter((o) => o.status === "fulfilled");
    const refused = outcomes.filter((o) => o.status === "rejected") as PromiseRejectedResult[];
    expect(delivered).toHaveLength(1);
    expect((delivered[0] as PromiseFulfilledResult<{ result: string }>).value.result).toBe("delivered");
    expect(refused).toHaveLength(1);
    expect(AppError.is(refused[0]!.reason) && refused[0]!.reason.reason).toBe("egress_capacity_exhausted");
    expect(hits).toBe(1);
    expect((await catalog.getReplayUsage({ accountId, day })).used).toBe(usedBefore + 1);

    // Through the gateway, the refusal is 503 with Retry-After: 1 and no RateLimit headers.
    const held = one.replayEvent(request);
    await waitFor(() => inFlight > 0 || undefined, { what: "first replay in flight" });
    const res = await cluster.api.post(`/v1/endpoints/${ep.id}/events/${id}/replay`, { target_url: slowUrl });
    expect(res.status).toBe(503);
    expect(res.body.error).toBe("egress_capacity_exhausted");
    expect(res.headers.get("retry-after")).toBe("1");
    expect(res.headers.get("ratelimit-limit")).toBeNull();
    await held;
  }, 30_000);

  it("frees the lease of a replay process killed mid-request within the TTL", async () => {
    const catalog = createServiceClient(CatalogService, createPeerTransport(cluster.env.WHC_CATALOG_URL!, 5000, cluster.credentials));
    const { accountId } = await catalog.authenticateApiKey({ keyHash: hashApiKey(CLUSTER_KEY) });
    const ep = (await cluster.api.post("/v1/endpoints", {})).body as { id: string; webhookUrl: string };
    const { id } = (await (await fetch(ep.webhookUrl, { method: "POST", body: "p" })).json()) as { id: string };
    const request = { accountId, endpointId: ep.id, eventId: id, targetUrl: slowUrl, client: "api" };
    const doomed = createServiceClient(ReplayService, createPeerTransport(secondUrl, 20_000, cluster.credentials));
    const pending = doomed.replayEvent(request).catch((e: unknown) => e);
    await waitFor(() => inFlight > 0 || undefined, { what: "replay in flight" });
    await second.stop("SIGKILL");
    expect(AppError.is(await pending)).toBe(true);

    const survivor = createServiceClient(ReplayService, createPeerTransport(cluster.env.WHC_REPLAY_URL!, 20_000, cluster.credentials));
    const result = await waitFor(
      async () => {
        try {
          return await survivor.replayEvent(request);
        } catch (err) {
          if (AppError.is(err) && err.reason === "egress_capacity_exhausted") return undefined;
          throw err;
        }
      },
      { timeoutMs: 10_000, intervalMs: 250, what: "lease expiry" },
    );
    expect(result.result).toBe("delivered");
  }, 30_000);
});
