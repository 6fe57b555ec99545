import { generateKeyPairSync } from "node:crypto";
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { startTestSystem, type TestSystem } from "./testing/index.js";

let t: TestSystem;
/** A system whose public ingest URL leads nowhere: triggers still reach its own listener (ADR 0055). */
let hidden: TestSystem;
beforeAll(async () => {
  [t, hidden] = await Promise.all([startTestSystem(), startTestSystem({ WHC_INGEST_PUBLIC_URL: "http://hooks.example.invalid" })]);
});
afterAll(async () => {
  await Promise.all([t?.stop(), hidden?.stop()]);
});

async function endpoint(system: TestSystem, body: Record<string, unknown>) {
  const res = await system.a.post("/v1/endpoints", body);
  expect(res.status).toBe(201);
  return res.body as { id: string; webhookUrl: string };
}

async function detail(system: TestSystem, endpointId: string, eventId: string) {
  return (await system.a.get(`/v1/endpoints/${endpointId}/events/${eventId}`)).body as Record<string, any>;
}

describe("POST /v1/endpoints/{id}/trigger", () => {
  it("captures a Stripe invoice.paid signed with the endpoint's secret as verified, the set field in its body", async () => {
    const ep = await endpoint(t, { provider: "stripe", secret: "whsec_trigger_all_in_one" });
    const res = await t.a.post(`/v1/endpoints/${ep.id}/trigger`, { eventType: "invoice.paid", set: { "data.object.amount_paid": 500 } });
    expect(res.status).toBe(200);
    const event = await detail(t, ep.id, res.body.eventId);
    expect([event.provider, event.canonicalEventType, event.verification]).toEqual(["stripe", "invoice.paid", "verified"]);
    const body = JSON.parse(event.body);
    expect(body.data.object.amount_paid).toBe(500);
    expect(body.id).toMatch(/^evt_/);
    expect(JSON.stringify(event.headers)).toMatch(/stripe-signature/i);
    // Each trigger is a new delivery: new ids.
    const again = await t.a.post(`/v1/endpoints/${ep.id}/trigger`, { eventType: "invoice.paid" });
    expect(JSON.parse((await detail(t, ep.id, again.body.eventId)).body).id).not.toBe(body.id);
  });

  it("refuses an event type the provider has no sample of, listing the ones it has", async () => {
    const ep = await endpoint(t, { provider: "stripe", secret: "whsec_x" });
    const res = await t.a.post(`/v1/endpoints/${ep.id}/trigger`, { eventType: "invoice.teleported" });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("validation_failed");
    expect(res.body.details).toMatchObject({ field: "eventType", reason: "unknown" });
    expect(res.body.details.allowed).toContain("invoice.paid");
    expect((await t.a.get(`/v1/endpoints/${ep.id}/events`)).body.items).toEqual([]);
  });

  it("refuses a bad set path, too many set fields and an unknown field, storing nothing", async () => {
    const ep = await endpoint(t, { provider: "stripe" });
    const bad = await t.a.post(`/v1/endpoints/${ep.id}/trigger`, { eventType: "invoice.paid", set: { "data.__proto__.x": 1 } });
    expect([bad.status, bad.body.details]).toEqual([400, { field: "set.data.__proto__.x", reason: "format" }]);
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i]));
    const tooMany = await t.a.post(`/v1/endpoints/${ep.id}/trigger`, { eventType: "invoice.paid", set: many });
    expect([tooMany.status, tooMany.body.details.field, tooMany.body.details.reason]).toEqual([400, "set", "length"]);
    const unknown = await t.a.post(`/v1/endpoints/${ep.id}/trigger`, { eventType: "invoice.paid", extra: 1 });
    expect([unknown.status, unknown.body.details.reason]).toEqual([400, "unknown"]);
    expect((await t.a.post(`/v1/endpoints/${ep.id}/trigger`, {})).body.details).toEqual({ field: "eventType", reason: "required" });
    expect((await t.a.get(`/v1/endpoints/${ep.id}/events`)).body.items).toEqual([]);
  });

  it("says why an endpoint cannot be triggered: generic has no samples, a Discord public key cannot sign, a paused endpoint stores nothing", async () => {
    const generic = await endpoint(t, {});
    const none = await t.a.post(`/v1/endpoints/${generic.id}/trigger`, { eventType: "invoice.paid" });
    expect([none.status, none.body.error, none.body.details]).toEqual([409, "trigger_unavailable", { cause: "no_samples" }]);
    const publicKey = generateKeyPairSync("ed25519").publicKey.export({ format: "der", type: "spki" }).subarray(-32).toString("hex");
    const discord = await endpoint(t, { provider: "discord", secret: publicKey });
    const unsignable = await t.a.post(`/v1/endpoints/${discord.id}/trigger`, { eventType: "APPLICATION_AUTHORIZED" });
    expect([unsignable.status, unsignable.body.details]).toEqual([409, { cause: "public_key_secret" }]);
    const paused = await endpoint(t, { provider: "github", secret: "s", status: "paused" });
    const notCaptured = await t.a.post(`/v1/endpoints/${paused.id}/trigger`, { eventType: "push" });
    expect([notCaptured.status, notCaptured.body.details]).toEqual([409, { cause: "not_captured", status: 503 }]);
  });

  it("answers the event id whatever the endpoint is configured to answer, and goes out unsigned without a secret", async () => {
    const ep = await endpoint(t, { provider: "shopify", response: { status: 202, body: "thanks" } });
    const res = await t.a.post(`/v1/endpoints/${ep.id}/trigger`, { eventType: "orders/create", set: { total_price: "1.00" } });
    expect(res.status).toBe(200);
    const event = await detail(t, ep.id, res.body.eventId);
    expect([event.responseCode, event.verification, event.canonicalEventType]).toEqual([202, "unverified", "orders/create"]);
    expect(JSON.parse(event.body).total_price).toBe("1.00");
  });

  it("reaches the process's own ingest when the public URL leads elsewhere, and signs that public URL (Twilio)", async () => {
    const ep = await endpoint(hidden, { provider: "twilio", secret: "0123456789abcdef0123456789abcdef" });
    expect(ep.webhookUrl.startsWith("http://hooks.example.invalid/h/")).toBe(true);
    const res = await hidden.a.post(`/v1/endpoints/${ep.id}/trigger`, { eventType: "received", set: { Body: "trigger me" } });
    expect(res.status).toBe(200);
    const event = await detail(hidden, ep.id, res.body.eventId);
    expect([event.provider, event.canonicalEventType, event.verification]).toEqual(["twilio", "received", "verified"]);
    expect(new URLSearchParams(event.body).get("Body")).toBe("trigger me");
  });

  it("lists each provider's sample event types", async () => {
    const { items } = (await t.a.get("/v1/providers")).body as { items: { name: string; sampleEventTypes: string[] }[] };
    const of = (name: string) => items.find((p) => p.name === name)!.sampleEventTypes;
    expect(of("stripe")).toContain("invoice.paid");
    expect(of("twilio").length).toBeGreaterThanOrEqual(3);
    expect(of("generic")).toEqual([]);
  });
});
