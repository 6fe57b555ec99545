import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { waitFor } from "@whc/testing";
import { startDestination, startTestSystem, type TestDestination, type TestSystem } from "./testing/index.js";

/**
 * Alert channels in the all-in-one process (design §18; ADRs 0085, 0086): the catalog raises,
 * the alert outbox holds, the replay node's worker sends through the egress guard, and real
 * local channels receive. Retry delays, the coalescing window and the stall time are shortened
 * by configuration; every wait is for something to arrive, never a fixed sleep.
 */

const WINDOW_S = 5;
let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem({
    WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true",
    WHC_FORWARD_RETRY_BASE_MS: "50",
    WHC_FORWARD_POLL_MS: "100",
    WHC_ALERT_COALESCE_S: String(WINDOW_S),
    WHC_LISTENER_STALL_S: "1",
  });
});
afterAll(async () => {
  await t.stop();
});

type Message = { type: string; timestamp: string; data: Record<string, any> };

/** What a webhook channel received, each verified with the Standard Webhooks reference library. */
function verified(channel: TestDestination, secret: string): Message[] {
  const wh = new Webhook(secret);
  return channel.received.map((r) => wh.verify(r.body.toString("utf8"), r.headers as Record<string, string>) as Message);
}

async function relayTo(slug: string, url: string) {
  // Six failures in a row would open the destination's breaker (design §18) and hold the last
  // deliveries instead of giving them up: its threshold is set above what these tests send.
  const created = await t.a.post("/v1/endpoints", { slug, operatingMode: "relay", forward: { url, maxAttempts: 2, breaker: { failures: 20 } } });
  expect(created.status).toBe(201);
  return created.body as { id: string; webhookUrl: string };
}

describe("alert channels in the all-in-one process", () => {
  it("sends a webhook channel a signed delivery.exhausted, then the repeats within the window as one alert carrying their count", async () => {
    const down = await startDestination(503);
    const receiver = await startDestination(200);
    const ep = await relayTo("alerted-relay", `${down.url}/hook`);
    const created = await t.a.post("/v1/alert-channels", { name: "pager", type: "webhook", url: `${receiver.url}/alerts`, events: ["delivery.exhausted"], endpointIds: [ep.id] });
    expect(created.status).toBe(201);
    const secret = created.body.secret as string;

    const first = (await (await fetch(ep.webhookUrl, { method: "POST", body: '{"n":1}' })).json()) as { id: string };
    await waitFor(() => receiver.received.length >= 1 || undefined, { what: "the first alert", timeoutMs: 20_000 });
    const [alert] = verified(receiver, secret);
    expect(alert).toEqual({
      type: "delivery.exhausted",
      timestamp: alert!.data.lastAt,
      data: { eventId: first.id, attempts: 2, status: 503, error: null, endpointId: ep.id, endpointSlug: "alerted-relay", count: 1, firstAt: alert!.data.lastAt, lastAt: alert!.data.lastAt },
    });
    expect(down.received).toHaveLength(2);
    const firstId = receiver.received[0]!.headers["webhook-id"];

    // Two more deliveries given up while the first alert's window is open: one alert, count 2, when it ends.
    const more = [];
    for (const n of [2, 3]) more.push(((await (await fetch(ep.webhookUrl, { method: "POST", body: `{"n":${n}}` })).json()) as { id: string }).id);
    await waitFor(() => receiver.received.length >= 2 || undefined, { what: "the coalesced alert", timeoutMs: 30_000 });
    const second = verified(receiver, secret)[1]!;
    // The last occurrence's event: the two deliveries are given up concurrently, in either order.
    expect(second.data).toMatchObject({ count: 2, endpointSlug: "alerted-relay" });
    expect(more).toContain(second.data.eventId);
    expect(Date.parse(second.data.lastAt) - Date.parse(second.data.firstAt)).toBeLessThan(WINDOW_S * 1000);
    expect(Date.parse(second.data.firstAt)).toBeGreaterThan(Date.parse(alert!.data.lastAt));
    expect(receiver.received[1]!.headers["webhook-id"]).not.toBe(firstId);
    expect(receiver.received).toHaveLength(2);

    const listed = (await t.a.get("/v1/alert-channels")).body.items as { id: string; lastDelivery: Record<string, unknown> }[];
    expect(listed.find((c) => c.id === created.body.id)!.lastDelivery).toMatchObject({ type: "delivery.exhausted", state: "delivered", attempts: 1, status: 200, error: null });
    const metrics = await (await fetch(`${t.metricsUrl}/metrics`)).text();
    expect(metrics).toMatch(/^whc_alerts_total\{type="delivery.exhausted",state="delivered"\} 2$/m);
    await down.close();
    await receiver.close();
  }, 60_000);

  it("tells a Slack channel of a capture whose signature failed, in words, and nothing of one that verified", async () => {
    const slack = await startDestination(200);
    const secret = "whsec_stripe_alerts";
    const ep = (await t.a.post("/v1/endpoints", { slug: "alerted-stripe", provider: "stripe", secret })).body as { id: string; webhookUrl: string };
    expect((await t.a.post("/v1/alert-channels", { name: "ops-slack", type: "slack", url: `${slack.url}/services/T0/B0/x`, events: ["signature.failed"] })).status).toBe(201);
    const body = '{"id":"evt_1","type":"invoice.paid"}';
    const t0 = Math.floor(Date.now() / 1000);
    const good = `t=${t0},v1=${createHmac("sha256", secret).update(`${t0}.${body}`).digest("hex")}`;
    expect((await fetch(ep.webhookUrl, { method: "POST", headers: { "stripe-signature": good }, body })).status).toBe(200);
    const bad = (await (await fetch(ep.webhookUrl, { method: "POST", headers: { "stripe-signature": `t=${t0},v1=${"0".repeat(64)}` }, body })).json()) as { id: string };
    await waitFor(() => slack.received.length >= 1 || undefined, { what: "the Slack alert", timeoutMs: 20_000 });
    expect(slack.received[0]!.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(slack.received[0]!.body.toString("utf8"))).toEqual({
      text: `Webhook Capture: signature.failed on endpoint *alerted-stripe*: event ${bad.id} (stripe): signature_mismatch`,
    });
    expect(slack.received).toHaveLength(1);
    await slack.close();
  }, 30_000);

  it("coalesces a hundred failures within the window into at most two alerts: the first at once, then one carrying the rest", async () => {
    const receiver = await startDestination(200);
    const ep = (await t.a.post("/v1/endpoints", { slug: "alerted-flood", provider: "stripe", secret: "whsec_flood" })).body as { id: string; webhookUrl: string };
    const created = await t.a.post("/v1/alert-channels", { name: "flood", type: "webhook", url: `${receiver.url}/alerts`, events: ["signature.failed"], endpointIds: [ep.id] });
    expect(created.status).toBe(201);
    const t0 = Math.floor(Date.now() / 1000);
    const sent = Date.now();
    // Ten senders at once, ten bad signatures each: well within the window, however loaded the machine.
    await Promise.all(
      Array.from({ length: 10 }, async (_, s) => {
        for (let n = 0; n < 10; n += 1) {
          const body = `{"id":"evt_${s}_${n}","type":"invoice.paid"}`;
          const res = await fetch(ep.webhookUrl, { method: "POST", headers: { "stripe-signature": `t=${t0},v1=${"0".repeat(64)}` }, body });
          expect(res.status).toBe(200);
        }
      }),
    );
    expect(Date.now() - sent).toBeLessThan(WINDOW_S * 1000);
    const secret = created.body.secret as string;
    const counted = () => verified(receiver, secret).reduce((sum, a) => sum + (a.data.count as number), 0);
    await waitFor(() => counted() >= 100 || undefined, { what: "alerts counting all 100", timeoutMs: 30_000 });
    // Nothing more comes once the window has ended.
    await new Promise((r) => setTimeout(r, 1000));
    const alerts = verified(receiver, secret);
    // The first goes as soon as its outbox entry is claimed, counting those stored before that (a
    // loaded machine may store them all first); the rest of the window's are one more.
    expect(alerts.length).toBeLessThanOrEqual(2);
    expect(alerts.every((a) => a.type === "signature.failed")).toBe(true);
    expect(alerts.reduce((sum, a) => sum + (a.data.count as number), 0)).toBe(100);
    await receiver.close();
  }, 60_000);

  it("sends a test alert when asked, and the channel shows it delivered", async () => {
    const receiver = await startDestination(202);
    const created = (await t.a.post("/v1/alert-channels", { name: "tested", type: "webhook", url: receiver.url, events: ["delivery.failed"] })).body as { id: string; secret: string };
    const test = await t.a.post(`/v1/alert-channels/${created.id}/test`);
    expect(test.status).toBe(202);
    await waitFor(async () => {
      const c = ((await t.a.get("/v1/alert-channels")).body.items as { id: string; lastDelivery: { alertId: string; state: string } | null }[]).find((x) => x.id === created.id);
      return c?.lastDelivery?.alertId === test.body.alertId && c?.lastDelivery?.state === "delivered" ? c : undefined;
    }, { what: "the test alert delivered" });
    const [message] = verified(receiver, created.secret);
    expect(message).toMatchObject({ type: "test", data: { channelId: created.id, channelName: "tested", count: 1 } });
    expect(receiver.received[0]!.headers["webhook-id"]).toBe(test.body.alertId);
    await receiver.close();
  });

  it("raises listener.stalled when a listener's lag has not fallen for WHC_LISTENER_STALL_S", async () => {
    const receiver = await startDestination(200);
    const ep = (await t.a.post("/v1/endpoints", { slug: "alerted-listener" })).body as { id: string; webhookUrl: string };
    const created = (await t.a.post("/v1/alert-channels", { name: "stalls", type: "webhook", url: receiver.url, events: ["listener.stalled"] })).body as { secret: string };
    for (let i = 0; i < 2; i += 1) expect((await fetch(ep.webhookUrl, { method: "POST", body: "behind" })).status).toBe(200);
    const listener = "01a20000-0000-7000-8000-00000000abcd";
    const heartbeat = () =>
      t.a.call("PUT", `/v1/endpoints/${ep.id}/listeners/${listener}`, {
        json: { host: "dev-laptop", startedAt: new Date().toISOString(), cursor: { at: "2020-01-01T00:00:00.000Z", id: "00000000-0000-7000-8000-000000000000" }, lastError: "connection_refused" },
      });
    // Its cursor is before both captures, and it stays there while it heartbeats.
    expect((await heartbeat()).body).toMatchObject({ lagEvents: 2, stalled: false });
    const stalled = await waitFor(async () => ((await heartbeat()).body.stalled === true ? true : undefined), { what: "the listener stalled", intervalMs: 200 });
    expect(stalled).toBe(true);
    await waitFor(() => receiver.received.length >= 1 || undefined, { what: "the listener.stalled alert" });
    const [message] = verified(receiver, created.secret);
    expect(message).toMatchObject({ type: "listener.stalled", data: { listenerId: listener, host: "dev-laptop", lagEvents: 2, endpointSlug: "alerted-listener" } });
    await receiver.close();
  });
});

describe("alert channels with production settings (private targets not allowed)", () => {
  let prod: TestSystem;
  beforeAll(async () => {
    prod = await startTestSystem();
  });
  afterAll(async () => {
    await prod.stop();
  });

  it("refuses a channel URL the egress guard refuses, and creates one it admits", async () => {
    for (const [url, reason] of [
      ["http://127.0.0.1:8080/alerts", "loopback"],
      ["http://10.1.2.3/alerts", "private_address"],
      ["http://169.254.169.254/latest/meta-data", "metadata"],
      ["http://[::1]:9/", "loopback"],
    ] as const) {
      const res = await prod.a.post("/v1/alert-channels", { name: `refused-${reason}`, type: "webhook", url, events: ["test"] });
      expect([res.status, res.body.error, res.body.details], url).toEqual([400, "target_not_allowed", { reason }]);
    }
    expect((await prod.a.get("/v1/alert-channels")).body.items).toEqual([]);
    const unresolved = await prod.a.post("/v1/alert-channels", { name: "later", type: "slack", url: "https://does-not-resolve.invalid/x", events: ["test"] });
    expect(unresolved.status).toBe(201);
  });
});
