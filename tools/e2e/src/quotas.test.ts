import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { waitFor, type ApiResponse } from "@whc/testing";
import { CLUSTER_KEY, scaleOut, startCluster, type Cluster, type Replicas } from "./cluster.js";

/*
 * The quotas of design §14 in distributed mode: five built processes, then a second catalog and
 * a second gateway (each gateway on its own catalog, one store: the SQLite file, or MongoDB when
 * the run is given one). The endpoint quota is the account's across both; the key's rate and
 * its wait polls are counted by each gateway (ADR 0035).
 */

const ENDPOINTS = 5;
const RPS = 3;
/** A second tenant, bootstrapped beside the cluster's own account. */
const OTHER_KEY = `whc_${"E".repeat(20)}${"8".repeat(20)}`;

let cluster: Cluster;
let replicas: Replicas;
beforeAll(async () => {
  cluster = await startCluster({
    WHC_BOOTSTRAP_API_KEYS: `dist:${CLUSTER_KEY},other:${OTHER_KEY}`,
    WHC_QUOTA_ENDPOINTS: String(ENDPOINTS),
    WHC_QUOTA_API_RPS: String(RPS),
    WHC_QUOTA_WAITS_PER_KEY: "1",
  });
  replicas = await scaleOut(cluster, 2);
}, 120_000);
afterAll(async () => {
  await cluster?.shutdown();
});

function refusedWith(answers: ApiResponse[], quota: string): ApiResponse[] {
  const refused = answers.filter((a) => a.status === 429);
  for (const r of refused) {
    expect(r.body.error).toBe("quota_exceeded");
    expect(r.body.details.quota).toBe(quota);
    expect(r.body.requestId).toBe(r.headers.get("x-request-id"));
  }
  return refused;
}

// Each test keeps within the key's burst (2 x RPS) on each gateway, but where it spends it on purpose.
describe("quotas across two gateways and two catalogs (distributed)", () => {
  it("lets exactly the endpoint quota's worth of concurrent creates through both gateways, and pages them", async () => {
    const [g1, g2] = replicas.apis;
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? g2! : g1!).post("/v1/endpoints", { slug: `quota-${i}` })));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(ENDPOINTS);
    const [refused] = refusedWith(answers, "endpoints");
    expect(refused!.body.details).toEqual({ quota: "endpoints", limit: ENDPOINTS });
    expect(refused!.headers.get("retry-after")).toBeNull();
    const first = await g1!.get("/v1/endpoints?limit=3");
    const second = await g2!.get(`/v1/endpoints?limit=3&after=${first.body.nextAfter as string}`);
    const ids = [...first.body.items, ...second.body.items].map((e: { id: string }) => e.id);
    expect(ids).toHaveLength(ENDPOINTS);
    expect([...ids].sort()).toEqual(ids);
    expect(second.body.nextAfter).toBeUndefined();
  });

  it("throttles a key past its rate on one gateway, with Retry-After and RateLimit headers, while another tenant is served there", async () => {
    const [g1, g2] = replicas.apis;
    const other = (path: string) => fetch(`${replicas.gatewayUrls[0]}${path}`, { headers: { authorization: `Bearer ${OTHER_KEY}` } });
    const [answers, otherStatuses] = await Promise.all([
      Promise.all(Array.from({ length: 6 * RPS }, () => g1!.get("/v1/endpoints?limit=1"))),
      Promise.all(Array.from({ length: 3 }, async () => (await other("/v1/endpoints")).status)),
    ]);
    expect(otherStatuses).toEqual([200, 200, 200]);
    const refused = refusedWith(answers, "api_rate");
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      expect(r.body.details).toEqual({ quota: "api_rate" });
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(r.headers.get("ratelimit-limit")).toBe(String(RPS));
      expect(r.headers.get("ratelimit-remaining")).toBe("0");
    }
    // The other gateway keeps its own count for the key: the limit is per replica.
    expect((await g2!.get("/v1/endpoints?limit=1")).status).toBe(200);
  });

  it("refuses a second concurrent wait of a key on one gateway with Retry-After 1", async () => {
    const gateway = replicas.gatewayUrls[0]!;
    const headers = { authorization: `Bearer ${OTHER_KEY}` };
    const created = await fetch(`${gateway}/v1/endpoints`, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: "{}" });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const held = new AbortController();
    const poll = fetch(`${gateway}/v1/endpoints/${id}/events?wait=30`, { headers, signal: held.signal }).catch(() => undefined);
    try {
      const refused = await waitFor(
        async () => {
          const r = await fetch(`${gateway}/v1/endpoints/${id}/events?wait=1`, { headers });
          const body = (await r.json()) as { details?: { quota?: string; limit?: number } };
          return r.status === 429 ? { retryAfter: r.headers.get("retry-after"), details: body.details } : undefined;
        },
        { what: "the second wait refused" },
      );
      expect(refused).toEqual({ retryAfter: "1", details: { quota: "waits", limit: 1 } });
    } finally {
      held.abort();
      await poll;
    }
  });
});
