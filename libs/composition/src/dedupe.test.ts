import { describe, it, expect, beforeAll, afterAll } from "vitest";
import Stripe from "stripe";
import { waitFor } from "@whc/testing";
import { startDestination, startTestSystem, type TestDestination, type TestSystem } from "./testing/index.js";

/**
 * Deduplication in the all-in-one process (design §17): captures over HTTP into ingest, which
 * sends each capture's keyed hash of its provider's own id (or of named fields), and the
 * embedded catalog decides in the append. A duplicate is stored and answered like the first,
 * shows duplicateOf, and is never forwarded. The distributed services (two ingest processes, two
 * catalogs on one store) run the same race in tools/e2e dedupe.test.ts.
 */

let t: TestSystem;
let destination: TestDestination;
const stripe = new Stripe("sk_test_dedupe");
const SECRET = "whsec_dedupe_source";

beforeAll(async () => {
  t = await startTestSystem({ WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true", WHC_FORWARD_RETRY_BASE_MS: "50", WHC_FORWARD_POLL_MS: "50" });
  destination = await startDestination();
});
afterAll(async () => {
  await destination?.close();
  await t?.stop();
});

interface Detail {
  id: string;
  duplicateOf?: string;
  responseCode: number;
  verification: string;
  forwardedResponse: { state?: string; deliveries?: { state: string; attempts: unknown[] }[] };
}

function stripeEvent(id: string, type = "invoice.paid"): string {
  return JSON.stringify({ id, object: "event", api_version: "2024-06-20", created: 1795000000, type, data: { object: { id: `in_${id}`, object: "invoice", amount_paid: 2000 } } }, null, 2);
}

/** Sends the payload as Stripe does, signed now by Stripe's own SDK (a retry is signed afresh). */
async function sendStripe(webhookUrl: string, payload: string, signature = stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET })) {
  const res = await fetch(webhookUrl, { method: "POST", headers: { "content-type": "application/json", "stripe-signature": signature }, body: payload });
  return { status: res.status, body: (await res.json()) as { ok: boolean; id: string } };
}

async function detail(endpointId: string, eventId: string): Promise<Detail> {
  const res = await t.a.get<Detail>(`/v1/endpoints/${endpointId}/events/${eventId}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** The Stripe event ids the destination received (the fields case's captures are not Stripe's). */
const receivedIds = () => destination.received.filter((r) => !r.url.startsWith("/fields")).map((r) => (JSON.parse(r.body.toString()) as { id: string }).id);

async function stripeRelay(): Promise<{ id: string; webhookUrl: string }> {
  const created = await t.a.post("/v1/endpoints", {
    operatingMode: "relay",
    provider: "stripe",
    secret: SECRET,
    forward: { url: `${destination.url}/stripe`, keepPath: false },
    dedupe: { windowSeconds: 3600, key: "auto" },
  });
  expect(created.status, created.text).toBe(201);
  return created.body as { id: string; webhookUrl: string };
}

describe("deduplication, all-in-one", () => {
  it("a Stripe event sent twice, each signed by Stripe's SDK: both stored and answered alike, the second duplicateOf the first and never forwarded", async () => {
    const ep = await stripeRelay();
    const payload = stripeEvent("evt_1Dedupe0001");
    const first = await sendStripe(ep.webhookUrl, payload);
    const second = await sendStripe(ep.webhookUrl, payload, stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET, timestamp: Math.floor(Date.now() / 1000) + 1 }));
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.body).toEqual({ ok: true, id: second.body.id });
    expect(second.body.id).not.toBe(first.body.id);

    const dup = await detail(ep.id, second.body.id);
    expect(dup).toMatchObject({ duplicateOf: first.body.id, responseCode: 200, verification: "verified" });
    expect(dup.forwardedResponse.state).toBe("duplicate");
    expect(dup.forwardedResponse.deliveries?.map((d) => [d.state, d.attempts.length])).toEqual([["duplicate", 0]]);
    expect((await detail(ep.id, first.body.id)).duplicateOf).toBeUndefined();

    // Another event after them: once it has been forwarded, the outbox (oldest first) has had
    // every chance to send a duplicate, and it sent the first event once and nothing else.
    const later = await sendStripe(ep.webhookUrl, stripeEvent("evt_1Dedupe0002"));
    await waitFor(() => receivedIds().includes("evt_1Dedupe0002") || undefined, { what: "the later event forwarded" });
    await waitFor(async () => (await detail(ep.id, first.body.id)).forwardedResponse.state === "delivered" || undefined, { what: "the first delivered" });
    expect(receivedIds().filter((id) => id === "evt_1Dedupe0001")).toEqual(["evt_1Dedupe0001"]);
    // Forwarded exactly as it came: the signature Stripe's SDK made verifies at the destination.
    const forwarded = destination.received.find((r) => r.url.startsWith("/stripe") && (JSON.parse(r.body.toString()) as { id: string }).id === "evt_1Dedupe0001")!;
    expect(stripe.webhooks.constructEvent(forwarded.body, String(forwarded.headers["stripe-signature"]), SECRET).id).toBe("evt_1Dedupe0001");

    // The list shows duplicateOf, and filters on it.
    const list = await t.a.get(`/v1/endpoints/${ep.id}/events`);
    expect(list.status).toBe(200);
    const items = list.body.items as { id: string; duplicateOf?: string; forwardState?: string }[];
    expect(items.map((e) => [e.id, e.duplicateOf, e.forwardState])).toEqual([
      [later.body.id, undefined, "delivered"],
      [second.body.id, first.body.id, "duplicate"],
      [first.body.id, undefined, "delivered"],
    ]);
    const duplicates = await t.a.get(`/v1/endpoints/${ep.id}/events?duplicate=true`);
    expect((duplicates.body.items as { id: string }[]).map((e) => e.id)).toEqual([second.body.id]);
    const originals = await t.a.get(`/v1/endpoints/${ep.id}/events?duplicate=false`);
    expect((originals.body.items as { id: string }[]).map((e) => e.id)).toEqual([later.body.id, first.body.id]);
    const forwardState = await t.a.get(`/v1/endpoints/${ep.id}/events?forwardState=duplicate`);
    expect((forwardState.body.items as { id: string }[]).map((e) => e.id)).toEqual([second.body.id]);
    // Counted by ingest, when the catalog said so: one so far.
    const metrics = await (await fetch(`${t.metricsUrl}/metrics`)).text();
    expect(metrics).toMatch(/^whc_ingest_duplicates_total 1$/m);
    const bad = await t.a.get(`/v1/endpoints/${ep.id}/events?duplicate=yes`);
    expect(bad.status).toBe(400);
    expect(bad.body.details).toMatchObject({ field: "duplicate" });
  });

  it("sent twice at once: exactly one original, forwarded once", async () => {
    const ep = await stripeRelay();
    const payload = stripeEvent("evt_1DedupeRace");
    const sent = await Promise.all([sendStripe(ep.webhookUrl, payload), sendStripe(ep.webhookUrl, payload), sendStripe(ep.webhookUrl, payload)]);
    expect(sent.map((s) => s.status)).toEqual([200, 200, 200]);
    const details = await Promise.all(sent.map((s) => detail(ep.id, s.body.id)));
    const originals = details.filter((d) => d.duplicateOf === undefined);
    expect(originals).toHaveLength(1);
    for (const d of details) if (d !== originals[0]) expect(d.duplicateOf).toBe(originals[0]!.id);
    await waitFor(async () => (await detail(ep.id, originals[0]!.id)).forwardedResponse.state === "delivered" || undefined, { what: "the original delivered" });
    const marker = await sendStripe(ep.webhookUrl, stripeEvent("evt_1DedupeRaceAfter"));
    await waitFor(async () => (await detail(ep.id, marker.body.id)).forwardedResponse.state === "delivered" || undefined, { what: "the next delivered" });
    expect(receivedIds().filter((id) => id === "evt_1DedupeRace")).toHaveLength(1);
  });

  it("a request whose signature fails takes no part: a forged copy of an event never makes the real one a duplicate", async () => {
    const ep = await stripeRelay();
    const payload = stripeEvent("evt_1DedupeForged");
    const forged = await sendStripe(ep.webhookUrl, payload, stripe.webhooks.generateTestHeaderString({ payload, secret: "whsec_someone_else" }));
    const real = await sendStripe(ep.webhookUrl, payload);
    expect((await detail(ep.id, forged.body.id)).verification).toBe("failed");
    const realDetail = await detail(ep.id, real.body.id);
    expect(realDetail).toMatchObject({ verification: "verified" });
    expect(realDetail.duplicateOf).toBeUndefined();
  });

  it("fields: a sender's own header and body id make the key; a capture after the window is new again", async () => {
    const created = await t.a.post("/v1/endpoints", {
      operatingMode: "relay",
      forward: { url: `${destination.url}/fields`, keepPath: false },
      dedupe: { windowSeconds: 1, fields: ["header.x-request-id", "body.order.id"] },
    });
    expect(created.status, created.text).toBe(201);
    const ep = created.body as { id: string; webhookUrl: string };
    const send = async (requestId: string, orderId: number) => {
      const res = await fetch(ep.webhookUrl, { method: "POST", headers: { "content-type": "application/json", "x-request-id": requestId }, body: JSON.stringify({ order: { id: orderId }, at: Date.now() }) });
      return ((await res.json()) as { id: string }).id;
    };
    const a = await send("req-1", 7);
    const b = await send("req-1", 7);
    const c = await send("req-1", 8);
    expect((await detail(ep.id, b)).duplicateOf).toBe(a);
    expect((await detail(ep.id, c)).duplicateOf).toBeUndefined();
    // Captures without any of the fields are never duplicates of each other.
    const none1 = ((await (await fetch(ep.webhookUrl, { method: "POST", body: "plain" })).json()) as { id: string }).id;
    const none2 = ((await (await fetch(ep.webhookUrl, { method: "POST", body: "plain" })).json()) as { id: string }).id;
    expect([(await detail(ep.id, none1)).duplicateOf, (await detail(ep.id, none2)).duplicateOf]).toEqual([undefined, undefined]);
    // The window is one second: past it, the same key starts a new one.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const d = await send("req-1", 7);
    expect((await detail(ep.id, d)).duplicateOf).toBeUndefined();
  });

  it("refuses dedupe on a proxy endpoint, over /v1 (400 validation_failed, reason unsupported)", async () => {
    const res = await t.a.post("/v1/endpoints", { operatingMode: "proxy", forward: { url: destination.url }, dedupe: { windowSeconds: 60, key: "auto" } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: "validation_failed", details: { field: "dedupe", reason: "unsupported" } });
  });

  it("without dedupe, the same event twice is two originals, both forwarded", async () => {
    const created = await t.a.post("/v1/endpoints", { operatingMode: "relay", provider: "stripe", secret: SECRET, forward: { url: `${destination.url}/plain`, keepPath: false } });
    const ep = created.body as { id: string; webhookUrl: string };
    const payload = stripeEvent("evt_1DedupeOff");
    const ids = [(await sendStripe(ep.webhookUrl, payload)).body.id, (await sendStripe(ep.webhookUrl, payload)).body.id];
    for (const id of ids) {
      await waitFor(async () => (await detail(ep.id, id)).forwardedResponse.state === "delivered" || undefined, { what: "each delivered" });
      expect((await detail(ep.id, id)).duplicateOf).toBeUndefined();
    }
    expect(receivedIds().filter((id) => id === "evt_1DedupeOff")).toHaveLength(2);
  });
});
