import { afterEach, describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import { createEgressGuard } from "@whc/egress-guard";
import { waitFor } from "@whc/testing";
import { createAlertWorker, type AlertWorker } from "./alert-worker.js";
import { createAlertMetrics } from "./alert-metrics.js";
import { logger, onCleanup, refusingPort, runCleanups, startBackends, startTarget, valuesOf, type Backends } from "./testing/index.js";

/*
 * The alert outbox's worker (design §18; ADR 0085) against real local channels: what a webhook
 * channel receives verifies with the Standard Webhooks reference library, a Slack channel gets
 * its text, failures are retried and exhausted as relay deliveries are, and the egress guard
 * refuses what it refuses forwards. Retry delays are shortened by the options, never slept.
 */

afterEach(runCleanups);

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

function startWorker(b: Backends, extra: { allowPrivate?: boolean; maxAttempts?: number } = {}): { worker: AlertWorker; metrics: ReturnType<typeof createAlertMetrics> } {
  const metrics = createAlertMetrics();
  const worker = createAlertWorker(
    {
      catalog: b.catalog,
      crypto: b.crypto,
      leases: b.leases,
      egress: extra.allowPrivate === false ? createEgressGuard({ allowPrivate: false }) : b.deps.egress,
      logger,
      metrics,
    },
    { retryBaseMs: 20, pollMs: 50, claimMs: 5_000, connectTimeoutMs: 2_000, ...(extra.maxAttempts ? { maxAttempts: extra.maxAttempts } : {}) },
  );
  worker.start();
  onCleanup(() => worker.stop());
  return { worker, metrics };
}

async function channel(b: Backends, fields: { type: "webhook" | "slack"; url: string; events?: string[]; endpointIds?: string[] }) {
  const { channel } = await b.catalog.createAlertChannel({
    accountId: b.owner.accountId,
    name: `ch-${Math.random().toString(36).slice(2)}`,
    type: fields.type,
    url: fields.url,
    events: fields.events ?? ["delivery.exhausted", "test"],
    endpointIds: fields.endpointIds ?? [],
    sealedSecret: fields.type === "webhook" ? await b.sealSecret(SECRET) : new Uint8Array(),
  });
  return channel!;
}

async function lastDelivery(b: Backends, channelId: string) {
  const { channels } = await b.catalog.listAlertChannels({ accountId: b.owner.accountId });
  return channels.find((c) => c.id === channelId)?.lastDelivery;
}

const settled = (b: Backends, channelId: string) =>
  waitFor(async () => {
    const d = await lastDelivery(b, channelId);
    return d && d.state !== "pending" ? d : undefined;
  }, { what: "the alert to settle" });

describe("the alert worker", () => {
  it("sends a webhook channel the alert signed as Standard Webhooks, with its endpoint and count, and records it delivered", async () => {
    const b = await startBackends();
    const app = await startTarget((_req, res) => res.writeHead(204).end());
    const endpoint = await b.createEndpoint({ operatingMode: "capture" });
    const c = await channel(b, { type: "webhook", url: `${app.url}/alerts?k=1` });
    const { alertIds } = await b.catalog.raiseAlerts({
      alerts: [{ accountId: b.owner.accountId, type: "delivery.exhausted", endpointId: endpoint.id, dataJson: JSON.stringify({ eventId: "ev-1", attempts: 6, status: 503, error: null }) }],
    });
    const { metrics } = startWorker(b);
    await settled(b, c.id);

    expect(app.received).toHaveLength(1);
    const got = app.received[0]!;
    expect([got.method, got.url]).toEqual(["POST", "/alerts?k=1"]);
    const headers = Object.fromEntries(["webhook-id", "webhook-timestamp", "webhook-signature"].map((n) => [n, valuesOf(got.headers, n)[0]!]));
    expect(headers["webhook-id"]).toBe(alertIds[0]);
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
    const verified = new Webhook(SECRET).verify(got.body.toString("utf8"), headers) as Record<string, any>;
    expect(verified).toEqual({
      type: "delivery.exhausted",
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      data: { eventId: "ev-1", attempts: 6, status: 503, error: null, endpointId: endpoint.id, endpointSlug: endpoint.slug, count: 1, firstAt: verified.timestamp, lastAt: verified.timestamp },
    });
    expect(() => new Webhook("whsec_" + Buffer.alloc(32, 1).toString("base64")).verify(got.body.toString("utf8"), headers)).toThrow();
    expect(await lastDelivery(b, c.id)).toMatchObject({ alertId: alertIds[0], type: "delivery.exhausted", state: "delivered", attempts: 1, status: 204, error: "" });
    const text = await metrics.registry.metrics();
    expect(text).toContain('whc_alerts_total{type="delivery.exhausted",state="delivered"} 1');
    expect(text).toContain('whc_alert_attempts_total{type="delivery.exhausted",outcome="delivered"} 1');
  });

  it("sends a Slack channel a text a person reads", async () => {
    const b = await startBackends();
    const slack = await startTarget((_req, res) => res.end("ok"));
    const endpoint = await b.createEndpoint({ operatingMode: "capture", slug: "orders" });
    const c = await channel(b, { type: "slack", url: `${slack.url}/services/T0/B0/x`, events: ["signature.failed"] });
    await b.catalog.raiseAlerts({
      alerts: [{ accountId: b.owner.accountId, type: "signature.failed", endpointId: endpoint.id, dataJson: JSON.stringify({ eventId: "ev-9", provider: "stripe", reason: "signature_mismatch" }) }],
    });
    startWorker(b);
    await settled(b, c.id);
    const got = slack.received[0]!;
    expect(valuesOf(got.headers, "content-type")).toEqual(["application/json"]);
    expect(valuesOf(got.headers, "webhook-signature")).toEqual([]);
    expect(JSON.parse(got.body.toString("utf8"))).toEqual({ text: "Webhook Capture: signature.failed on endpoint *orders*: event ev-9 (stripe): signature_mismatch" });
  });

  it("retries a channel answering 503 as relay deliveries are retried, then delivers; the same webhook-id on every attempt", async () => {
    const b = await startBackends();
    let calls = 0;
    const app = await startTarget((_req, res) => {
      calls += 1;
      res.writeHead(calls < 3 ? 503 : 200).end();
    });
    const c = await channel(b, { type: "webhook", url: app.url });
    await b.catalog.raiseAlerts({ alerts: [{ accountId: b.owner.accountId, type: "test", dataJson: "{}", channelId: c.id }] });
    startWorker(b);
    expect(await settled(b, c.id)).toMatchObject({ state: "delivered", attempts: 3, status: 200 });
    const ids = app.received.map((r) => valuesOf(r.headers, "webhook-id")[0]);
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(1);
  });

  it("gives up after the attempts allowed (exhausted), and at once on a 4xx (failed)", async () => {
    const b = await startBackends();
    const down = await channel(b, { type: "webhook", url: `http://127.0.0.1:${await refusingPort()}/` });
    const gone = await startTarget((_req, res) => res.writeHead(410).end());
    const refusing = await channel(b, { type: "webhook", url: gone.url });
    for (const c of [down, refusing]) await b.catalog.raiseAlerts({ alerts: [{ accountId: b.owner.accountId, type: "test", dataJson: "{}", channelId: c.id }] });
    const { metrics } = startWorker(b, { maxAttempts: 3 });
    expect(await settled(b, down.id)).toMatchObject({ state: "exhausted", attempts: 3, status: 0, error: "connection_refused" });
    expect(await settled(b, refusing.id)).toMatchObject({ state: "failed", attempts: 1, status: 410 });
    expect(gone.received).toHaveLength(1);
    const text = await metrics.registry.metrics();
    expect(text).toContain('whc_alerts_total{type="test",state="exhausted"} 1');
    expect(text).toContain('whc_alerts_total{type="test",state="failed"} 1');
    expect(text).toContain('whc_alert_attempts_total{type="test",outcome="network_error"} 3');
  });

  it("sends nothing to a loopback channel when private targets are not allowed: failed, target_not_allowed", async () => {
    const b = await startBackends();
    const app = await startTarget();
    const c = await channel(b, { type: "webhook", url: app.url });
    await b.catalog.raiseAlerts({ alerts: [{ accountId: b.owner.accountId, type: "test", dataJson: "{}", channelId: c.id }] });
    startWorker(b, { allowPrivate: false });
    expect(await settled(b, c.id)).toMatchObject({ state: "failed", attempts: 1, status: 0, error: "target_not_allowed" });
    expect(app.received).toEqual([]);
  });
});
