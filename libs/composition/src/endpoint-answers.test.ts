import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { diagnosticWritten } from "@whc/api-model";
import { createHmac } from "node:crypto";
import Stripe from "stripe";
import { startTestSystem, type TestSystem } from "./testing/index.js";

/** Endpoints that answer what they are configured to (design §9, §10), end to end in one process. */
let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem();
});
afterAll(async () => {
  await t.stop();
});

interface Ep {
  id: string;
  webhookUrl: string;
  slug: string;
}

async function createEndpoint(body: Record<string, unknown> = {}): Promise<Ep> {
  const res = await t.a.post("/v1/endpoints", body);
  expect(res.status, res.text).toBe(201);
  return res.body as Ep;
}

const patch = (id: string, json: unknown) => t.a.call("PATCH", `/v1/endpoints/${id}`, { json });

async function detail(ep: Ep, eventId: string) {
  const res = await t.a.get(`/v1/endpoints/${ep.id}/events/${eventId}`);
  expect(res.status).toBe(200);
  const body = res.body as { responseCode: number; verification: string; diagnostic: Record<string, any> };
  // Rules, sequences, handshakes and proxies: each diagnostic has the /v1 schema's written shape.
  expect(diagnosticWritten.safeParse(body.diagnostic).error).toBeUndefined();
  return body;
}

/** The id of the newest capture: an answer other than the default does not carry it. */
async function newest(ep: Ep): Promise<{ id: string; responseCode: number }> {
  return (await t.a.get(`/v1/endpoints/${ep.id}/events?limit=1`)).body.items[0];
}

describe("what an endpoint answers", () => {
  it("answers a rule's 500 after storing the event, and lists it with responseCode 500", async () => {
    const ep = await createEndpoint({
      response: { rules: [{ match: { method: "POST", path: "/orders/*", header: { name: "X-Tenant", equals: "a" } }, status: 500, body: "nope {{query.n}}" }] },
    });
    const hit = await fetch(`${ep.webhookUrl}/orders/7?n=42`, { method: "POST", headers: { "X-Tenant": "a" }, body: "{}" });
    expect(hit.status).toBe(500);
    expect(await hit.text()).toBe("nope 42");
    const miss = await fetch(`${ep.webhookUrl}/orders/7/items`, { method: "POST", headers: { "X-Tenant": "a" }, body: "{}" });
    expect(miss.status).toBe(200);
    const list = (await t.a.get(`/v1/endpoints/${ep.id}/events?responseCode=500`)).body;
    expect(list.items).toHaveLength(1);
    expect(list.items[0].responseCode).toBe(500);
    expect((await detail(ep, list.items[0].id)).diagnostic.responseSource).toBe("rule");
    const other = (await t.a.get(`/v1/endpoints/${ep.id}/events?responseCode=200`)).body.items;
    expect((await detail(ep, other[0].id)).diagnostic.responseSource).toBe("default");
  });

  it("answers a sequence 500, 500, 200 and starts it again when the response is set again", async () => {
    const ep = await createEndpoint();
    expect((await patch(ep.id, { response: { sequence: [{ status: 500 }, { status: 500 }, { status: 200, body: "{\"ok\":1}" }] } })).status).toBe(200);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await fetch(ep.webhookUrl, { method: "POST", body: `n=${i}` })).status);
    expect(statuses).toEqual([500, 500, 200, 500]);
    const codes = (await t.a.get(`/v1/endpoints/${ep.id}/events`)).body.items.map((e: { responseCode: number }) => e.responseCode);
    expect(codes).toEqual([500, 200, 500, 500]);
    await patch(ep.id, { response: { sequence: [{ status: 503 }, { status: 201 }] } });
    const again = [(await fetch(ep.webhookUrl, { method: "POST" })).status, (await fetch(ep.webhookUrl, { method: "POST" })).status];
    expect(again).toEqual([503, 201]);
  });

  it("sends configured headers and a templated body, and never lets a substituted value add a header", async () => {
    const ep = await createEndpoint({
      response: { status: 202, headers: { "X-Echo": "{{query.v}}", "Content-Type": "application/json" }, body: "{\"got\":\"{{body.order.id}}\",\"event\":\"{{eventId}}\"}" },
    });
    const res = await fetch(`${ep.webhookUrl}?v=${encodeURIComponent("a\r\nSet-Cookie: stolen=1")}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ order: { id: "o-9" } }),
    });
    expect(res.status).toBe(202);
    expect(res.headers.get("set-cookie")).toBeNull();
    expect(res.headers.get("x-echo")).not.toMatch(/[\r\n]/);
    const body = (await res.json()) as { got: string; event: string };
    expect(body.got).toBe("o-9");
    expect(body.event).toBe((await newest(ep)).id);
  });

  it("never serves a configured body as a page: nosniff and a sandbox policy on every answer, whatever the configuration says", async () => {
    const ep = await createEndpoint({
      response: {
        status: 200,
        headers: { "Content-Type": "text/html", "Content-Security-Policy": "default-src *", "X-Content-Type-Options": "sniff" },
        body: "<script>alert(document.cookie)</script>",
      },
    });
    const configured = await fetch(ep.webhookUrl, { method: "POST", body: "x" });
    expect(configured.headers.get("content-type")).toBe("text/html");
    expect(configured.headers.get("x-content-type-options")).toBe("nosniff");
    expect(configured.headers.get("content-security-policy")).toBe("sandbox");
    expect(await configured.text()).toBe("<script>alert(document.cookie)</script>");
    // The built-in answer and a handshake's echo carry them too.
    const plain = await createEndpoint();
    const builtIn = await fetch(plain.webhookUrl, { method: "POST", body: "x" });
    const echoed = await fetch(`${plain.webhookUrl}?validationToken=${encodeURIComponent("<b>hi</b>")}`, { method: "POST" });
    for (const res of [builtIn, echoed]) {
      expect(res.status).toBe(200);
      expect([res.headers.get("x-content-type-options"), res.headers.get("content-security-policy")]).toEqual(["nosniff", "sandbox"]);
    }
    expect(await echoed.text()).toBe("<b>hi</b>");
  });

  it("waits delayMs after the commit before answering", async () => {
    const ep = await createEndpoint({ response: { delayMs: 400 } });
    const started = performance.now();
    const res = await fetch(ep.webhookUrl, { method: "POST", body: "x" });
    expect(res.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(380);
  });

  it("refuses a response over the limits with the dotted path of the field", async () => {
    const ep = await createEndpoint();
    const bad = await patch(ep.id, { response: { rules: [{ match: {}, status: 200 }, { match: {}, status: 200 }, { match: {}, status: 99 }] } });
    expect(bad.status).toBe(400);
    expect(bad.body.details).toEqual({ field: "response.rules.2.status", reason: "range" });
    const framing = await patch(ep.id, { response: { headers: { "Content-Length": "5" } } });
    expect(framing.status).toBe(400);
    expect(framing.body.details.field).toBe("response.headers");
    const slug = await patch(ep.id, { slug: "other" });
    expect(slug.body.details).toEqual({ field: "slug", reason: "immutable" });
  });
});

describe("handshakes", () => {
  it("passes Zoom's URL validation with the endpoint's secret, and still captures it", async () => {
    const ep = await createEndpoint({ secret: "zoom-secret-token" });
    const res = await fetch(ep.webhookUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ event: "endpoint.url_validation", payload: { plainToken: "qgg8vlvZRS6UYooatFL8Aw" }, event_ts: 1 }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      plainToken: "qgg8vlvZRS6UYooatFL8Aw",
      encryptedToken: createHmac("sha256", "zoom-secret-token").update("qgg8vlvZRS6UYooatFL8Aw").digest("hex"),
    });
    const stored = await newest(ep);
    expect((await detail(ep, stored.id)).diagnostic).toMatchObject({ handshake: "zoom_url_validation", responseSource: "handshake" });
  });

  it("echoes Meta's challenge for the right verify token and refuses a wrong one with 403", async () => {
    const ep = await createEndpoint({ secret: "meta-verify" });
    const ok = await fetch(`${ep.webhookUrl}?hub.mode=subscribe&hub.verify_token=meta-verify&hub.challenge=1158201444`);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe("1158201444");
    const wrong = await fetch(`${ep.webhookUrl}?hub.mode=subscribe&hub.verify_token=guess&hub.challenge=1158201444`);
    expect(wrong.status).toBe(403);
    expect((await newest(ep)).responseCode).toBe(403);
  });

  it("answers like any other request when handshakes are off", async () => {
    const ep = await createEndpoint({ response: { handshakes: false } });
    const res = await fetch(`${ep.webhookUrl}?challenge=abc`);
    expect(await res.json()).toMatchObject({ ok: true });
  });
});

describe("updating an endpoint", () => {
  it("pauses and resumes it, seen by ingest at once", async () => {
    const ep = await createEndpoint();
    expect((await fetch(ep.webhookUrl, { method: "POST" })).status).toBe(200);
    const paused = await patch(ep.id, { status: "paused" });
    expect(paused.body).toMatchObject({ status: "paused", slug: ep.slug });
    expect((await fetch(ep.webhookUrl, { method: "POST" })).status).toBe(503);
    await patch(ep.id, { status: "active" });
    expect((await fetch(ep.webhookUrl, { method: "POST" })).status).toBe(200);
  });

  it("keeps another account's endpoint out of reach: 404, nothing changed", async () => {
    const ep = await createEndpoint({ displayName: "Mine" });
    const res = await t.b.call("PATCH", `/v1/endpoints/${ep.id}`, { json: { displayName: "Theirs" } });
    expect(res.status).toBe(404);
    expect((await t.a.get(`/v1/endpoints/${ep.id}`)).body.displayName).toBe("Mine");
  });

  it("rotates the secret without one failed verification: the previous secret verifies in the grace", async () => {
    const stripe = new Stripe("sk_test_unused");
    const ep = await createEndpoint({ provider: "stripe", secret: "whsec_first" });
    const send = (secret: string) => {
      const payload = JSON.stringify({ id: "evt_1", type: "invoice.paid" });
      const header = stripe.webhooks.generateTestHeaderString({ payload, secret });
      return fetch(ep.webhookUrl, { method: "POST", headers: { "content-type": "application/json", "stripe-signature": header }, body: payload });
    };
    const rotated = await patch(ep.id, { secret: "whsec_second" });
    expect(rotated.body.secretSet).toBe(true);
    expect(Date.parse(rotated.body.secretRotatedAt)).toBeGreaterThan(Date.now() - 60_000);
    for (const [secret, matched] of [
      ["whsec_first", "previous"],
      ["whsec_second", "current"],
    ] as const) {
      expect((await send(secret)).status).toBe(200);
      const d = await detail(ep, (await newest(ep)).id);
      expect(d.verification).toBe("verified");
      expect(d.diagnostic.signature.matchedSecret).toBe(matched);
    }
    await patch(ep.id, { secret: null });
    expect((await t.a.get(`/v1/endpoints/${ep.id}`)).body.secretSet).toBe(false);
  });
});
