import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { randomUUID } from "node:crypto";
import Stripe from "stripe";
import { waitFor } from "@whc/testing";
import { startTestSystem, type TestSystem } from "./testing/index.js";

/*
 * Design §19 over the all-in-one system and real HTTP: fresh signatures for stored events
 * (computed by the replay service with the endpoint's sealed secret) and listener liveness
 * (kept by the catalog). Every answer is checked against the served OpenAPI document.
 */

const SECRET = "whsec_developer_loop";
const stripe = new Stripe("sk_test_x");

let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem();
});
afterAll(async () => {
  await t.stop();
});

/** A Stripe capture signed `ageS` seconds ago by Stripe's own library. */
async function stripeCapture(endpointBody: Record<string, unknown>, ageS: number) {
  const ep = (await t.a.post("/v1/endpoints", { provider: "stripe", ...endpointBody })).body as { id: string; webhookUrl: string };
  const payload = JSON.stringify({ id: "evt_late", object: "event", type: "invoice.paid" });
  const header = stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET, timestamp: Math.floor(Date.now() / 1000) - ageS });
  const res = await fetch(`${ep.webhookUrl}/stripe?x=1`, { method: "POST", headers: { "Stripe-Signature": header, "Content-Type": "application/json" }, body: payload });
  const { id } = (await res.json()) as { id: string };
  return { ep, id, payload, header };
}

describe("POST .../events/{eventId}/signature", () => {
  it("signs a capture whose signature went stale with the endpoint's secret, as Stripe's library accepts", async () => {
    const { ep, id, payload, header } = await stripeCapture({ secret: SECRET }, 600);
    expect(() => stripe.webhooks.constructEvent(payload, header, SECRET)).toThrow(/Timestamp outside the tolerance zone/);
    const res = await t.a.post(`/v1/endpoints/${ep.id}/events/${id}/signature`, {});
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ provider: "stripe", replaces: ["stripe-signature"] });
    expect(Math.abs(Date.parse(res.body.signedAt) - Date.now())).toBeLessThan(60_000);
    expect(stripe.webhooks.constructEvent(payload, res.body.headers["Stripe-Signature"], SECRET).type).toBe("invoice.paid");
    // With no body at all, the same.
    const bare = await t.a.call("POST", `/v1/endpoints/${ep.id}/events/${id}/signature`);
    expect(bare.status).toBe(200);
  });

  it("signs with target_secret when the endpoint has none; without either it names target_secret", async () => {
    const { ep, id, payload } = await stripeCapture({}, 0);
    const refused = await t.a.post(`/v1/endpoints/${ep.id}/events/${id}/signature`, {});
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: "validation_failed", details: { field: "target_secret", reason: "required" } });
    const res = await t.a.post(`/v1/endpoints/${ep.id}/events/${id}/signature`, { target_secret: "whsec_local_app" });
    expect(stripe.webhooks.constructEvent(payload, res.body.headers["Stripe-Signature"], "whsec_local_app").id).toBe("evt_late");
  });

  it("refuses with replayFromApi false, and bad bodies", async () => {
    const { ep, id } = await stripeCapture({ secret: SECRET, replayFromApi: false }, 0);
    const path = `/v1/endpoints/${ep.id}/events/${id}/signature`;
    expect((await t.a.post(path, {})).body).toMatchObject({ error: "replay_disabled" });
    expect((await t.a.post(path, { secret: "x" })).body).toMatchObject({ error: "validation_failed", details: { field: "secret", reason: "unknown" } });
    expect((await t.a.post(path, { target_url: "ftp://x.test/" })).body).toMatchObject({ error: "validation_failed", details: { field: "target_url" } });
    expect((await t.a.post(path, { target_secret: "s".repeat(1025) })).body).toMatchObject({ details: { field: "target_secret", reason: "length" } });
  });
});

describe("listeners", () => {
  const heartbeat = (extra: Record<string, unknown> = {}) => ({ host: "dev-laptop", startedAt: new Date().toISOString(), cursor: null, lastError: null, ...extra });

  it("registers a listener, lists it with its lag after its cursor, moves lastSeenAt at each heartbeat, and forgets it on DELETE", async () => {
    const ep = (await t.a.post("/v1/endpoints", {})).body as { id: string; webhookUrl: string };
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) ids.push(((await (await fetch(ep.webhookUrl, { method: "POST", body: `{"n":${i}}` })).json()) as { id: string }).id);
    const first = (await t.a.get(`/v1/endpoints/${ep.id}/events/${ids[0]}`)).body as { receivedAt: string };
    const id = randomUUID();
    const path = `/v1/endpoints/${ep.id}/listeners/${id}`;
    const put = await t.a.call("PUT", path, { json: heartbeat({ cursor: { at: first.receivedAt, id: ids[0] }, lastError: "connection_refused" }) });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ id, host: "dev-laptop", cursor: { at: first.receivedAt, id: ids[0] }, lagEvents: 2, lastError: "connection_refused", stalled: false });

    await new Promise((r) => setTimeout(r, 20));
    const again = await t.a.call("PUT", path, { json: heartbeat({ startedAt: put.body.startedAt }) });
    expect(Date.parse(again.body.lastSeenAt)).toBeGreaterThan(Date.parse(put.body.lastSeenAt));
    const listed = await t.a.get(`/v1/endpoints/${ep.id}/listeners`);
    expect(listed.body.items).toEqual([{ ...again.body }]);
    expect(listed.body.items[0]).toMatchObject({ cursor: null, lagEvents: 0, lastError: null });

    expect((await t.a.delete(path)).status).toBe(204);
    expect((await t.a.delete(path)).status).toBe(204);
    expect((await t.a.get(`/v1/endpoints/${ep.id}/listeners`)).body).toEqual({ items: [] });
  });

  it("refuses the 21st listener of an endpoint with 429 quota_exceeded (listeners), and bad heartbeats", async () => {
    const ep = (await t.a.post("/v1/endpoints", {})).body as { id: string };
    for (let i = 0; i < 20; i += 1) expect((await t.a.call("PUT", `/v1/endpoints/${ep.id}/listeners/${randomUUID()}`, { json: heartbeat() })).status).toBe(200);
    const refused = await t.a.call("PUT", `/v1/endpoints/${ep.id}/listeners/${randomUUID()}`, { json: heartbeat() });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error: "quota_exceeded", details: { quota: "listeners", limit: 20 } });

    const path = `/v1/endpoints/${ep.id}/listeners/${randomUUID()}`;
    const bad = async (json: unknown) => (await t.a.call("PUT", path, { json })).body.details;
    expect(await bad(heartbeat({ host: "h".repeat(256) }))).toEqual({ field: "host", reason: "length" });
    expect(await bad(heartbeat({ lastError: "e".repeat(1001) }))).toEqual({ field: "lastError", reason: "length" });
    expect(await bad(heartbeat({ cursor: { at: "yesterday", id: randomUUID() } }))).toMatchObject({ field: "cursor.at" });
    expect(await bad({ host: "h" })).toEqual({ field: "startedAt", reason: "required" });
    expect((await t.a.call("PUT", `/v1/endpoints/${ep.id}/listeners/not-a-uuid`, { json: heartbeat() })).body.details).toEqual({ field: "listenerId", reason: "format" });
  });
});

describe("a listener not heard from again", () => {
  let short: TestSystem;
  beforeAll(async () => {
    short = await startTestSystem({ WHC_LISTENER_TTL_S: "1" });
  });
  afterAll(async () => {
    await short.stop();
  });

  it("is gone WHC_LISTENER_TTL_S after its last heartbeat", async () => {
    const ep = (await short.a.post("/v1/endpoints", {})).body as { id: string };
    const put = await short.a.call("PUT", `/v1/endpoints/${ep.id}/listeners/${randomUUID()}`, { json: { host: "h", startedAt: new Date().toISOString() } });
    expect(put.status).toBe(200);
    const gone = await waitFor(async () => ((await short.a.get(`/v1/endpoints/${ep.id}/listeners`)).body.items.length === 0 ? Date.now() : undefined), {
      what: "the listener gone",
    });
    expect(gone - Date.parse(put.body.lastSeenAt)).toBeGreaterThanOrEqual(1000);
  });
});
