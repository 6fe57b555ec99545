import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { Webhook } from "standardwebhooks";
import { busiestWindow, timedDestination as destination, waitFor } from "@whc/testing";
import { startTestSystem, type TestSystem } from "./testing/index.js";

/**
 * Delivery control in the all-in-one process (design §18; ADRs 0087, 0088): a destination's
 * pause, rate limit and breaker, decided by the embedded catalog and obeyed by the process's
 * own outbox worker, shown on the endpoint, told to an alert channel and counted in /metrics.
 * The distributed services run the same over two replay replicas (tools/e2e
 * delivery-control.test.ts).
 */

let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem({ WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true", WHC_FORWARD_RETRY_BASE_MS: "100", WHC_FORWARD_POLL_MS: "50" });
});
afterAll(async () => {
  await t?.stop();
});

interface Breaker {
  state: string;
  since: string | null;
  consecutiveFailures: number;
  held: number;
  nextProbeAt: string | null;
  failures: number;
  probeAfterMs: number;
}
interface Destination {
  id: string;
  name: string;
  paused: boolean;
  breaker: Breaker;
}

async function relay(destinations: Record<string, unknown>[]) {
  const created = await t.a.post("/v1/endpoints", { operatingMode: "relay", destinations });
  expect(created.status, created.text).toBe(201);
  return created.body as { id: string; webhookUrl: string; destinations: Destination[] };
}

async function send(webhookUrl: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let n = 0; n < count; n += 1) ids.push(((await (await fetch(webhookUrl, { method: "POST", body: `{"n":${n}}` })).json()) as { id: string }).id);
  return ids;
}

const destinationOf = async (endpointId: string) => ((await t.a.get(`/v1/endpoints/${endpointId}`)).body as { destinations: Destination[] }).destinations[0]!;

describe("delivery control in the all-in-one process", () => {
  it("holds a paused destination's deliveries (nothing sent) and drains them oldest first once resumed", async () => {
    const dest = await destination(() => 200);
    try {
      const ep = await relay([{ name: "held-app", url: dest.url, paused: true }]);
      expect(ep.destinations[0]).toMatchObject({ paused: true, breaker: { state: "closed", held: 0 } });
      const ids = await send(ep.webhookUrl, 5);
      await waitFor(async () => ((await destinationOf(ep.id)).breaker.held === 5 ? true : undefined), { what: "5 held" });
      expect(dest.arrivals).toHaveLength(0);
      const listed = ((await t.a.get(`/v1/endpoints/${ep.id}/events?forwardState=pending`)).body.items as unknown[]).length;
      expect(listed).toBe(5);

      const d = ep.destinations[0]!;
      const resumed = await t.a.call("PATCH", `/v1/endpoints/${ep.id}`, { json: { destinations: [{ id: d.id, name: d.name, url: dest.url, paused: false }] } });
      expect(resumed.status, resumed.text).toBe(200);
      await waitFor(() => (dest.arrivals.length >= 5 ? true : undefined), { what: "the drain" });
      expect(dest.arrivals.map((a) => a.deliveryId)).toEqual(ids);
      // 10 a second without a rate limit: five are released 100 ms apart, 400 ms in all; what
      // arrives keeps most of it (341 ms was seen under CI load), where all at once takes ~10 ms.
      expect(dest.arrivals.at(-1)!.at - dest.arrivals[0]!.at).toBeGreaterThanOrEqual(300);
      expect((await destinationOf(ep.id)).breaker.held).toBe(0);
    } finally {
      await dest.close();
    }
  }, 30_000);

  it("spaces a rate-limited destination's deliveries", async () => {
    const dest = await destination(() => 200);
    try {
      const ep = await relay([{ name: "spaced", url: dest.url, rateLimit: { perSecond: 10 } }]);
      const ids = await send(ep.webhookUrl, 15);
      await waitFor(() => (dest.arrivals.length >= 15 ? true : undefined), { what: "15 deliveries", timeoutMs: 15_000 });
      expect(new Set(dest.arrivals.map((a) => a.deliveryId))).toEqual(new Set(ids));
      expect(busiestWindow(dest.arrivals.map((a) => a.at), 1000)).toBeLessThanOrEqual(11);
      expect(await (await fetch(`${t.metricsUrl}/metrics`)).text()).toMatch(/^whc_forward_limiter_waits_total [1-9]\d*$/m);
    } finally {
      await dest.close();
    }
  }, 30_000);

  it("opens a failing destination's breaker, holds its deliveries, probes, closes when it answers, and tells an alert channel", async () => {
    let up = false;
    const dest = await destination(() => (up ? 200 : 503));
    const alerts = await destination(() => 204);
    try {
      const channel = await t.a.post("/v1/alert-channels", { name: "aio-breakers", type: "webhook", url: alerts.url, events: ["destination.opened", "destination.closed", "delivery.exhausted"] });
      expect(channel.status, channel.text).toBe(201);
      // maxAttempts 2: a delivery whose two attempts fail would be exhausted, but for the breaker.
      const ep = await relay([{ name: "down-app", url: dest.url, maxAttempts: 2, breaker: { failures: 2, probeAfterMs: 1000 } }]);
      const ids = await send(ep.webhookUrl, 4);
      const open = await waitFor(
        async () => {
          const d = await destinationOf(ep.id);
          return d.breaker.state === "open" && d.breaker.held === 4 ? d : undefined;
        },
        { what: "open, 4 held" },
      );
      expect(open.breaker).toMatchObject({ failures: 2, probeAfterMs: 1000 });
      expect(open.breaker.consecutiveFailures).toBeGreaterThanOrEqual(2);
      expect(open.breaker.nextProbeAt).not.toBeNull();
      // A failed probe leaves it open: wait for one, then let the destination answer.
      await waitFor(() => (dest.arrivals.filter((a) => a.at > Date.parse(open.breaker.since!) + 500).length >= 1 ? true : undefined), { what: "a probe" });
      up = true;
      await waitFor(() => (dest.arrivals.filter((a) => a.status === 200).length >= 4 ? true : undefined), { what: "the drain", timeoutMs: 15_000 });
      expect(dest.arrivals.filter((a) => a.status === 200).map((a) => a.deliveryId)).toEqual(ids);
      expect((await destinationOf(ep.id)).breaker).toMatchObject({ state: "closed", held: 0, consecutiveFailures: 0 });

      await waitFor(() => (alerts.arrivals.length >= 2 ? true : undefined), { what: "two alerts" });
      const secret = channel.body.secret as string;
      const types = alerts.arrivals.map((a) => (new Webhook(secret).verify(a.body, a.headers) as { type: string }).type);
      // Nothing was exhausted: held deliveries never are.
      expect(types).toEqual(["destination.opened", "destination.closed"]);
    } finally {
      await dest.close();
      await alerts.close();
    }
  }, 40_000);
});
