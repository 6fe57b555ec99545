import { describe, it, expect, beforeAll, afterAll } from "vitest";
import Stripe from "stripe";
import twilio from "twilio";
import { createHash } from "node:crypto";
import { diagnosticWritten } from "@whc/api-model";
import { startTestSystem, type TestSystem } from "./testing/index.js";

/** An event's diagnostic, as a user reads it (design §12), end to end through ingest and the gateway. */
let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem();
});
afterAll(async () => {
  await t.stop();
});

const stripe = new Stripe("sk_test_unused");
const SECRET = "whsec_diagnosis_secret";

async function stripeEndpoint(secret = SECRET) {
  const res = await t.a.post("/v1/endpoints", { provider: "stripe", secret });
  expect(res.status).toBe(201);
  return res.body as { id: string; webhookUrl: string };
}

async function send(ep: { id: string; webhookUrl: string }, body: string, signature: string) {
  const res = await fetch(ep.webhookUrl, { method: "POST", headers: { "content-type": "application/json", "stripe-signature": signature }, body });
  expect(res.status).toBe(200);
  const { id } = (await res.json()) as { id: string };
  const detail = (await t.a.get(`/v1/endpoints/${ep.id}/events/${id}`)).body as { id: string; diagnostic: Record<string, any>; verification: string };
  // Every diagnostic ingest writes has the /v1 schema's written shape (every part present, values from its lists).
  expect(diagnosticWritten.safeParse(detail.diagnostic).error).toBeUndefined();
  return detail;
}

const event = { id: "evt_1", object: "event", type: "invoice.paid", data: { object: { id: "in_1", amount_paid: 900 } } };

describe("the diagnostic of every event", () => {
  it("names a body that was pretty-printed after Stripe signed it", async () => {
    const ep = await stripeEndpoint();
    const signed = JSON.stringify(event);
    const header = stripe.webhooks.generateTestHeaderString({ payload: signed, secret: SECRET });
    const d = await send(ep, JSON.stringify(event, null, 2), header);
    expect(d.verification).toBe("failed");
    expect(d.diagnostic.signature).toMatchObject({ provider: "stripe", header: "Stripe-Signature", verdict: "failed", likelyCause: "body_reserialized" });
    expect(d.diagnostic.signature.explanation).toMatch(/\S.*\./);
    expect(d.diagnostic.bodySha256).toBe(createHash("sha256").update(JSON.stringify(event, null, 2)).digest("hex"));
    expect(d.diagnostic.contentType).toEqual({ declared: "application/json", bodyIs: "json", mismatch: false });
  });

  it("names a stale timestamp with its skew, and warns that an exact replay would be refused", async () => {
    const ep = await stripeEndpoint();
    const payload = JSON.stringify(event);
    const header = stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET, timestamp: Math.floor(Date.now() / 1000) - 600 });
    const d = await send(ep, payload, header);
    expect(d.diagnostic.signature).toMatchObject({ likelyCause: "stale_timestamp", toleranceSeconds: 300 });
    expect(Math.abs(d.diagnostic.signature.skewSeconds - 600)).toBeLessThanOrEqual(5);
    const curl = await t.a.get(`/v1/endpoints/${ep.id}/events/${d.id}/curl`);
    expect(curl.body.warnings).toEqual([expect.objectContaining({ code: "signature_timestamp_stale", message: expect.stringMatching(/resign/) })]);
  });

  it("names a secret saved with a trailing newline, and says a good capture was verified", async () => {
    const ep = await stripeEndpoint(`${SECRET}\n`);
    const payload = JSON.stringify(event);
    const d = await send(ep, payload, stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET }));
    expect(d.diagnostic.signature.likelyCause).toBe("secret_format");
    const good = await stripeEndpoint();
    const ok = await send(good, payload, stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET }));
    expect(ok.diagnostic.signature).toMatchObject({ verdict: "verified", likelyCause: "none", matchedSecret: "current" });
    expect(ok.diagnostic.signature.checks.every((c: { ok: boolean }) => c.ok)).toBe(true);
    expect(ok.diagnostic.responseSource).toBe("default");
  });

  it("verifies a Twilio delivery signed for the webhookUrl, and names a URL mismatch when Twilio signed another scheme", async () => {
    const token = "twilio-auth-token-0123456789abcdef";
    const res = await t.a.post("/v1/endpoints", { provider: "twilio", secret: token });
    const ep = res.body as { id: string; webhookUrl: string };
    const url = `${ep.webhookUrl}/sms?tenant=a`;
    const params = { AccountSid: "AC123", Body: "hello", From: "+15550001111", MessageSid: "SM1", SmsStatus: "received" };
    const form = new URLSearchParams(params).toString();
    const post = async (signedFor: string) => {
      const sent = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": twilio.getExpectedTwilioSignature(token, signedFor, params) },
        body: form,
      });
      const { id } = (await sent.json()) as { id: string };
      return (await t.a.get(`/v1/endpoints/${ep.id}/events/${id}`)).body as { verification: string; diagnostic: Record<string, any> };
    };
    expect((await post(url)).verification).toBe("verified");
    const behindTls = await post(url.replace(/^http:/, "https:"));
    expect(behindTls.verification).toBe("failed");
    expect(behindTls.diagnostic.signature.likelyCause).toBe("url_mismatch");
    expect(behindTls.diagnostic.contentType.bodyIs).toBe("form");
  });
});
