import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { Webhook } from "standardwebhooks";
import { busiestWindow, freePort, timedDestination as destination, waitFor, type RunningProcess } from "@whc/testing";
import { startCluster, type Cluster } from "./cluster.js";

/**
 * Delivery control across real processes (design §18; ADRs 0087, 0088): one catalog decides, two
 * replay replicas send. A destination's rate limit holds across both; its breaker opens, holds
 * every delivery (none exhausted, none discarded), probes one at a time with a doubling delay,
 * survives a SIGKILL of replay and catalog, and drains oldest first at the drain rate once the
 * destination is back; an alert channel hears of the opening and the closing. Delays are
 * configuration (probeAfterMs, WHC_FORWARD_*), never slept through.
 */

async function capture(webhookUrl: string, n: number): Promise<string> {
  const res = await fetch(webhookUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n }) });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: string }).id;
}

interface DestinationView {
  id: string;
  name: string;
  paused: boolean;
  breaker: { state: string; since: string | null; consecutiveFailures: number; held: number; nextProbeAt: string | null };
}

describe("delivery control across processes: one catalog, two replay replicas", () => {
  let cluster: Cluster;
  let second: { url: string; proc: RunningProcess };
  let secondMetrics: string;
  beforeAll(async () => {
    cluster = await startCluster({
      WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true",
      // The checks read endpoints and events while deliveries drain.
      WHC_QUOTA_API_RPS: "5000",
      WHC_FORWARD_RETRY_BASE_MS: "200",
      WHC_FORWARD_POLL_MS: "100",
      WHC_FORWARD_CLAIM_MS: "3000",
      WHC_EGRESS_SLOTS_PER_ORIGIN: "64",
    });
    const metricsPort = await freePort();
    secondMetrics = `http://127.0.0.1:${metricsPort}`;
    second = await cluster.extra("replay", { WHC_METRICS_PORT: String(metricsPort) });
  }, 120_000);
  afterAll(async () => {
    await second?.proc.stop();
    await cluster?.shutdown();
  });

  const destinationOf = async (endpointId: string): Promise<DestinationView> => {
    const ep = (await cluster.api.get(`/v1/endpoints/${endpointId}`)).body as { destinations: DestinationView[] };
    return ep.destinations[0]!;
  };

  it("keeps a destination limited to 5/s at 5 (+1) in every 1-s window while 100 deliveries drain, each delivered once", async () => {
    const dest = await destination(() => 200);
    try {
      const created = await cluster.api.post("/v1/endpoints", {
        slug: "limited",
        operatingMode: "relay",
        destinations: [{ name: "slow", url: `${dest.url}/hooks`, rateLimit: { perSecond: 5 } }],
      });
      expect(created.status).toBe(201);
      const ep = created.body as { id: string; webhookUrl: string; destinations: DestinationView[] };
      expect(ep.destinations[0]).toMatchObject({ rateLimit: { perSecond: 5 }, breaker: { state: "closed", held: 0 } });
      const ids: string[] = [];
      for (let n = 0; n < 100; n += 1) ids.push(await capture(ep.webhookUrl, n));

      await waitFor(() => (dest.arrivals.length >= 100 ? true : undefined), { what: "100 deliveries", timeoutMs: 60_000 });
      // Nothing more comes: each was delivered once.
      await new Promise((r) => setTimeout(r, 1000));
      expect(dest.arrivals).toHaveLength(100);
      expect(new Set(dest.arrivals.map((a) => a.deliveryId))).toEqual(new Set(ids));
      expect(busiestWindow(dest.arrivals.map((a) => a.at), 1000)).toBeLessThanOrEqual(6);
      // Paced, not bunched then starved: 100 at 5/s take about 20 s.
      const times = dest.arrivals.map((a) => a.at);
      expect(Math.max(...times) - Math.min(...times)).toBeGreaterThan(18_000);

      // Both replicas took their share of the turns, and counted the deliveries they moved to a later one.
      const waits = async (url: string) => Number(/^whc_forward_limiter_waits_total (\d+)/m.exec(await (await fetch(`${url}/metrics`)).text())?.[1] ?? 0);
      expect((await waits(cluster.metricsUrls.replay)) + (await waits(secondMetrics))).toBeGreaterThan(0);
    } finally {
      await dest.close();
    }
  }, 120_000);

  it("holds a failing destination's deliveries when its breaker opens, probes one at a time, survives a SIGKILL of replay and catalog, then drains each once in order; an alert channel hears both", async () => {
    let up = false;
    const dest = await destination(() => (up ? 200 : 503));
    const alerts = await destination(() => 204);
    try {
      const channel = await cluster.api.post("/v1/alert-channels", {
        name: "breakers",
        type: "webhook",
        url: `${alerts.url}/alerts`,
        events: ["destination.opened", "destination.closed"],
      });
      expect(channel.status).toBe(201);
      const secret = channel.body.secret as string;
      const created = await cluster.api.post("/v1/endpoints", {
        slug: "flaky",
        operatingMode: "relay",
        // maxAttempts 2: were held attempts counted, every delivery would be exhausted here.
        destinations: [{ name: "flaky-app", url: `${dest.url}/hooks`, maxAttempts: 2, breaker: { failures: 3, probeAfterMs: 1000 } }],
      });
      const ep = created.body as { id: string; webhookUrl: string; destinations: DestinationView[] };
      const destinationId = ep.destinations[0]!.id;
      const ids: string[] = [];
      for (let n = 0; n < 20; n += 1) ids.push(await capture(ep.webhookUrl, n));

      // Open, with every delivery held: none exhausted, none failed.
      await waitFor(
        async () => {
          const d = await destinationOf(ep.id);
          return d.breaker.state !== "closed" && d.breaker.held + (d.breaker.state === "half_open" ? 1 : 0) === 20 ? d : undefined;
        },
        { what: "the breaker open with all 20 held", timeoutMs: 30_000 },
      );
      const opened = await destinationOf(ep.id);
      expect(opened.breaker.consecutiveFailures).toBeGreaterThanOrEqual(3);
      const since = Date.parse(opened.breaker.since!);
      const events = (await cluster.api.get(`/v1/endpoints/${ep.id}/events?limit=50`)).body.items as { forwardState: string }[];
      expect(events.map((e) => e.forwardState)).toEqual(Array(20).fill("pending"));

      // The opening was told, signed.
      await waitFor(() => (alerts.arrivals.length >= 1 ? true : undefined), { what: "destination.opened", timeoutMs: 20_000 });
      const openedAlert = new Webhook(secret).verify(alerts.arrivals[0]!.body, alerts.arrivals[0]!.headers) as { type: string; data: Record<string, unknown> };
      expect(openedAlert).toMatchObject({
        type: "destination.opened",
        data: { endpointId: ep.id, endpointSlug: "flaky", destinationId, name: "flaky-app", state: "open", count: 1 },
      });
      expect(openedAlert.data.consecutiveFailures).toBeGreaterThanOrEqual(3);

      // A SIGKILL of the catalog and of one replay replica while open: started again, nothing changes.
      await new Promise((r) => setTimeout(r, 1500));
      expect(await cluster.stop("replay", "SIGKILL")).toBe(null);
      expect(await cluster.stop("catalog", "SIGKILL")).toBe(null);
      await cluster.start("catalog");
      await cluster.start("replay");
      const after = await destinationOf(ep.id);
      expect(after.breaker.state).not.toBe("closed");
      expect(after.breaker.held + (after.breaker.state === "half_open" ? 1 : 0)).toBe(20);
      // The replica started again shows it: open (2) or probing (1), its held deliveries counted.
      const gauges = await (await fetch(`${cluster.metricsUrls.replay}/metrics`)).text();
      expect(gauges).toMatch(new RegExp(`^whc_forward_breaker_state\\{destination="${destinationId}"\\} [12]$`, "m"));
      expect(gauges).toMatch(new RegExp(`^whc_forward_held\\{destination="${destinationId}"\\} (19|20)$`, "m"));

      // Back after about ten seconds of failing, and at least two probes: a loaded machine's
      // restarts above can take seconds, and the probe after them comes its delay later.
      await new Promise((r) => setTimeout(r, Math.max(0, since + 10_000 - Date.now())));
      await waitFor(() => (dest.arrivals.filter((a) => a.at > since + 500).length >= 2 ? true : undefined), { what: "two probes while open", timeoutMs: 40_000 });
      up = true;
      const recoveredAt = Date.now();
      await waitFor(() => (dest.arrivals.filter((a) => a.status === 200).length >= 20 ? true : undefined), { what: "all 20 delivered", timeoutMs: 60_000 }).catch(async (err: Error) => {
        // What the breaker and the destination saw, so a slow drain tells itself from a stalled one.
        const seen = dest.arrivals.map((a) => `${a.at - since}ms ${a.deliveryId.slice(-6)}#${a.attempt} ${a.status}`).join(", ");
        throw new Error(`${err.message}; recovered at ${recoveredAt - since}ms; breaker ${JSON.stringify((await destinationOf(ep.id)).breaker)}; arrivals ${seen}`);
      });
      await new Promise((r) => setTimeout(r, 1000));

      // While open: only probes, one at a time, at least the probe delay apart (1 s, then doubling).
      const probes = dest.arrivals.filter((a) => a.at > since + 500 && a.at < recoveredAt);
      expect(probes.length).toBeGreaterThanOrEqual(2);
      for (let i = 1; i < probes.length; i += 1) expect(probes[i]!.at - probes[i - 1]!.at).toBeGreaterThanOrEqual(900);
      // Every held delivery arrived once, oldest first, at most 10 (+1) a second.
      const delivered = dest.arrivals.filter((a) => a.status === 200);
      expect(delivered.map((a) => a.deliveryId)).toEqual(ids);
      expect(busiestWindow(delivered.map((a) => a.at), 1000)).toBeLessThanOrEqual(11);
      const final = await destinationOf(ep.id);
      expect(final.breaker).toMatchObject({ state: "closed", consecutiveFailures: 0, held: 0, nextProbeAt: null });
      const settled = (await cluster.api.get(`/v1/endpoints/${ep.id}/events?limit=50`)).body.items as { forwardState: string }[];
      expect(settled.map((e) => e.forwardState)).toEqual(Array(20).fill("delivered"));

      await waitFor(() => (alerts.arrivals.length >= 2 ? true : undefined), { what: "destination.closed", timeoutMs: 20_000 });
      const closedAlert = new Webhook(secret).verify(alerts.arrivals[1]!.body, alerts.arrivals[1]!.headers) as { type: string; data: Record<string, unknown> };
      expect(closedAlert).toMatchObject({ type: "destination.closed", data: { endpointId: ep.id, destinationId, name: "flaky-app", state: "closed", consecutiveFailures: 0 } });

      const metrics = await (await fetch(`${cluster.metricsUrls.replay}/metrics`)).text();
      expect(metrics).toContain(`whc_forward_breaker_state{destination="${destinationId}"} 0`);
      expect(metrics).toContain(`whc_forward_held{destination="${destinationId}"} 0`);
    } finally {
      await dest.close();
      await alerts.close();
    }
  }, 150_000);
});
