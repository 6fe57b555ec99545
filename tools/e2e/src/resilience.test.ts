import { describe, it, expect, beforeAll, afterAll } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { apiClient, waitFor } from "@whc/testing";
import { CLUSTER_KEY, SERVICES, startCluster, type Cluster } from "./cluster.js";

let cluster: Cluster;
let target: http.Server;
let targetUrl: string;
let targetHits = 0;

beforeAll(async () => {
  // It stops and restarts NATS: a private nats-server even where the run is given one.
  cluster = await startCluster(
    { WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true", WHC_DATA_KEY_TTL_S: "1", WHC_RPC_TIMEOUT_MS: "3000" },
    { ownNats: true },
  );
  target = http.createServer((req, res) => {
    targetHits += 1;
    req.resume();
    res.end("ok");
  });
  await new Promise<void>((r) => target.listen(0, "127.0.0.1", r));
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  target?.close();
  await cluster?.shutdown();
});

async function newEndpoint() {
  return (await cluster.api.post("/v1/endpoints", {})).body as { id: string; webhookUrl: string };
}

async function capture(url: string, body = "x") {
  const res = await fetch(url, { method: "POST", body });
  return { status: res.status, retryAfter: res.headers.get("retry-after"), body: (await res.json()) as { id?: string } };
}

describe("NATS down", () => {
  it("captures still succeed, wait falls back to re-querying, replays fail closed; all recover when NATS returns", async () => {
    const ep = await newEndpoint();
    const doomed = await newEndpoint();
    expect((await capture(doomed.webhookUrl, "looked up and cached by ingest")).status).toBe(200);
    await cluster.nats.pause();
    await waitFor(async () => {
      const health = (await (await fetch(`${cluster.gatewayUrl}/healthz`)).json()) as { checks: Record<string, string> };
      return health.checks.bus === "down" || undefined;
    }, { what: "gateway to notice" });

    const stored = await capture(ep.webhookUrl, "during outage");
    expect(stored.status).toBe(200);

    // Deleted while ingest cannot hear of it: its cached lookup still says the endpoint
    // exists, but the commit finds it gone, so the sender is answered 404, never a 2xx.
    expect((await cluster.api.delete(`/v1/endpoints/${doomed.id}`)).status).toBe(204);
    const refused = await capture(doomed.webhookUrl, "after the delete");
    expect(refused.status).toBe(404);
    expect(refused.body.id).toBeUndefined();

    const started = Date.now();
    const held = cluster.api.get(`/v1/endpoints/${ep.id}/events?wait=20&after=${encodeURIComponent(new Date().toISOString())}&afterId=01a20000-0000-7000-8000-000000000000`);
    await new Promise((r) => setTimeout(r, 300));
    const second = await capture(ep.webhookUrl, "wakes the poll");
    const res = await held;
    expect(res.body.items.map((e: { id: string }) => e.id)).toContain(second.body.id);
    expect(Date.now() - started).toBeLessThan(4000);

    const hitsBefore = targetHits;
    const replay = await cluster.api.post(`/v1/endpoints/${ep.id}/events/${stored.body.id}/replay`, { target_url: targetUrl });
    expect(replay.status).toBe(503);
    expect(replay.body.error).toBe("egress_capacity_exhausted");
    expect(targetHits).toBe(hitsBefore);

    await cluster.nats.resume();
    await waitFor(
      async () => {
        const r = await cluster.api.post(`/v1/endpoints/${ep.id}/events/${stored.body.id}/replay`, { target_url: targetUrl });
        return r.status === 200 || undefined;
      },
      { timeoutMs: 20_000, intervalMs: 500, what: "leases back" },
    );
    // notifications again: a wait answers within a moment of a capture
    const pending = cluster.api.get(`/v1/endpoints/${ep.id}/events?wait=20&after=${encodeURIComponent(new Date(Date.now() + 1000).toISOString())}&afterId=01a20000-0000-7000-8000-000000000000`);
    await new Promise((r) => setTimeout(r, 1500));
    const third = await capture(ep.webhookUrl, "after recovery");
    const woke = await pending;
    expect(woke.body.items.map((e: { id: string }) => e.id)).toContain(third.body.id);
  }, 60_000);
});

describe("catalog down", () => {
  it("ingest answers 503 with Retry-After, the gateway 503 service_unavailable; both recover by themselves", async () => {
    const ep = await newEndpoint();
    expect((await capture(ep.webhookUrl)).status).toBe(200);
    await cluster.stop("catalog", "SIGKILL");
    const unavailable = async () =>
      Number(/^whc_ingest_requests_total\{outcome="unavailable"\} (\S+)$/m.exec(await (await fetch(`${cluster.metricsUrls.ingest}/metrics`)).text())?.[1] ?? 0);
    const before = await unavailable();
    const refused = await capture(ep.webhookUrl);
    expect(refused.status).toBe(503);
    expect(refused.retryAfter).toBeTruthy();
    // What operators alert on (docs/operations.md).
    expect((await unavailable()) - before).toBe(1);
    const api = await cluster.api.get("/v1/endpoints");
    expect(api.status).toBe(503);
    expect(api.body.error).toBe("service_unavailable");
    expect(api.headers.get("retry-after")).toBeTruthy();
    expect((await fetch(`${cluster.gatewayUrl}/healthz`)).status).toBe(503);

    await cluster.start("catalog");
    await waitFor(async () => ((await cluster.api.get("/v1/endpoints")).status === 200 ? true : undefined), { what: "gateway recovery" });
    await waitFor(async () => ((await capture(ep.webhookUrl)).status === 200 ? true : undefined), { what: "ingest recovery" });
  }, 60_000);
});

describe("crypto down", () => {
  it("captures and detail reads answer 503 once cached keys expire; lists keep working; all recover", async () => {
    const ep = await newEndpoint();
    const before = await capture(ep.webhookUrl, "sealed before");
    await cluster.stop("crypto", "SIGKILL");
    await new Promise((r) => setTimeout(r, 1500)); // WHC_DATA_KEY_TTL_S=1: the cached data keys expire
    const refused = await capture(ep.webhookUrl, "refused");
    expect(refused.status).toBe(503);
    const detail = await cluster.api.get(`/v1/endpoints/${ep.id}/events/${before.body.id}`);
    expect(detail.status).toBe(503);
    expect(detail.body.error).toBe("service_unavailable");
    const list = await cluster.api.get(`/v1/endpoints/${ep.id}/events`);
    expect(list.status).toBe(200);
    expect(list.body.items.map((e: { id: string }) => e.id)).toEqual([before.body.id]);

    await cluster.start("crypto");
    await waitFor(async () => ((await capture(ep.webhookUrl, "after")).status === 200 ? true : undefined), { what: "captures back" });
    expect((await cluster.api.get(`/v1/endpoints/${ep.id}/events/${before.body.id}`)).body.body).toBe("sealed before");
  }, 60_000);
});

describe("restarts", () => {
  it("keep endpoints, events, keys, counters and the key ring across SIGTERM and SIGKILL of every process", async () => {
    const ep = await newEndpoint();
    const sent = await capture(ep.webhookUrl, "survives restarts");
    await cluster.api.post(`/v1/endpoints/${ep.id}/events/${sent.body.id}/replay`, { target_url: targetUrl });
    const countsBefore = (await cluster.api.get(`/v1/endpoints/${ep.id}`)).body;

    for (const signal of ["SIGTERM", "SIGKILL"] as const) {
      for (const s of SERVICES) {
        const code = await cluster.stop(s, signal);
        if (signal === "SIGTERM") expect(code, s).toBe(0);
      }
      for (const s of SERVICES) await cluster.start(s);
      await waitFor(async () => ((await fetch(`${cluster.gatewayUrl}/healthz`)).status === 200 ? true : undefined), { what: "healthy" });
    }
    const api = apiClient(cluster.gatewayUrl, CLUSTER_KEY);
    const detail = await api.get(`/v1/endpoints/${ep.id}/events/${sent.body.id}`);
    expect(detail.body.body).toBe("survives restarts");
    expect((await api.get(`/v1/endpoints/${ep.id}`)).body.eventCount).toBe(countsBefore.eventCount);
    const replay = await api.post(`/v1/endpoints/${ep.id}/events/${sent.body.id}/replay`, { target_url: targetUrl });
    expect(Number(replay.headers.get("ratelimit-remaining"))).toBeLessThan(Number(replay.headers.get("ratelimit-limit")) - 1);
  }, 120_000);

  it("drains an in-flight request on SIGTERM before exiting", async () => {
    const ep = await newEndpoint();
    const held = cluster.api.get(`/v1/endpoints/${ep.id}/events?wait=30`);
    await new Promise((r) => setTimeout(r, 300));
    const exit = cluster.stop("gateway", "SIGTERM");
    const res = await held;
    expect(res.status).toBe(200);
    expect(await exit).toBe(0);
    await cluster.start("gateway");
  }, 30_000);
});

describe("scale-out", () => {
  it("a wait on one gateway wakes on a capture taken by another ingest", async () => {
    const gateway2 = await cluster.extra("gateway");
    const ingest2 = await cluster.extra("ingest");
    await cluster.extra("replay");
    const ep = await newEndpoint();
    const api2 = apiClient(gateway2.url, CLUSTER_KEY);
    const held = api2.get(`/v1/endpoints/${ep.id}/events?wait=20`);
    await new Promise((r) => setTimeout(r, 300));
    const viaSecondIngest = ep.webhookUrl.replace(cluster.ingestUrl, ingest2.url);
    const sent = await capture(viaSecondIngest, "across instances");
    // From the capture's 2xx (its commit), not from before it was sent: a slow disk's commit is
    // not the wake's time. Woken by the notice, the wait answers at once; the re-query safety
    // net would come only 5 s after the wait began (the bus connected).
    const answered = Date.now();
    const res = await held;
    expect(res.body.items.map((e: { id: string }) => e.id)).toEqual([sent.body.id]);
    expect(Date.now() - answered).toBeLessThan(1000);
  }, 60_000);
});
