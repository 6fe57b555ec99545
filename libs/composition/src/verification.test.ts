import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { createHmac } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import Stripe from "stripe";
import { sign as octokitSign } from "@octokit/webhooks-methods";
import { startTestSystem, type TestSystem } from "./testing/index.js";

let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem();
});
afterAll(async () => {
  await t.stop();
});

async function endpoint(body: Record<string, unknown>) {
  const res = await t.a.post("/v1/endpoints", body);
  expect(res.status).toBe(201);
  return res.body as { id: string; webhookUrl: string; secretSet: boolean; provider: string };
}

async function captured(ep: { id: string }, id: string) {
  return (await t.a.get(`/v1/endpoints/${ep.id}/events/${id}`)).body;
}

describe("signature verification at capture", () => {
  it("keeps the secret write-only and sealed", async () => {
    const secret = "whsec_never_shown_anywhere_123";
    const ep = await endpoint({ provider: "stripe", secret });
    expect(ep.secretSet).toBe(true);
    expect(JSON.stringify(ep)).not.toContain(secret);
    expect(JSON.stringify((await t.a.get(`/v1/endpoints/${ep.id}`)).body)).not.toContain(secret);
    for (const file of readdirSync(t.dataDir)) {
      expect(readFileSync(path.join(t.dataDir, file)).includes(Buffer.from(secret)), file).toBe(false);
    }
  });

  it("verifies Stripe signatures made by stripe's library, and flags a wrong one", async () => {
    const secret = "whsec_stripe_e2e";
    const ep = await endpoint({ provider: "stripe", secret });
    const payload = JSON.stringify({ id: "evt_1", object: "event", type: "charge.refunded" });
    const stripe = new Stripe("sk_test_x");
    const good = await fetch(ep.webhookUrl, {
      method: "POST",
      headers: { "stripe-signature": stripe.webhooks.generateTestHeaderString({ payload, secret }), "content-type": "application/json" },
      body: payload,
    });
    const goodEvent = await captured(ep, ((await good.json()) as { id: string }).id);
    expect(goodEvent).toMatchObject({ provider: "stripe", verification: "verified", canonicalEventType: "charge.refunded" });
    expect(goodEvent.verificationFailureReason).toBeUndefined();

    const bad = await fetch(ep.webhookUrl, {
      method: "POST",
      headers: { "stripe-signature": stripe.webhooks.generateTestHeaderString({ payload, secret: "whsec_wrong" }) },
      body: payload,
    });
    expect(bad.status).toBe(200);
    const badEvent = await captured(ep, ((await bad.json()) as { id: string }).id);
    expect(badEvent).toMatchObject({ verification: "failed", verificationFailureReason: "signature_mismatch" });

    const missing = await fetch(ep.webhookUrl, { method: "POST", body: payload });
    expect(await captured(ep, ((await missing.json()) as { id: string }).id)).toMatchObject({
      verification: "failed",
      verificationFailureReason: "missing_signature",
    });

    const failed = await t.a.get(`/v1/endpoints/${ep.id}/events?status=failed`);
    expect(failed.body.items).toHaveLength(2);
  });

  it("detects GitHub on a generic endpoint and names the event with its action", async () => {
    const secret = "gh-secret";
    const ep = await endpoint({ secret });
    const payload = JSON.stringify({ action: "closed", number: 3 });
    const res = await fetch(ep.webhookUrl, {
      method: "POST",
      headers: { "x-github-event": "issues", "x-hub-signature-256": await octokitSign(secret, payload) },
      body: payload,
    });
    expect(await captured(ep, ((await res.json()) as { id: string }).id)).toMatchObject({
      provider: "github",
      verification: "verified",
      canonicalEventType: "issues.closed",
    });
  });

  it("verifies the generic HMAC header configured on the endpoint", async () => {
    const ep = await endpoint({ secret: "s3", genericSignatureHeader: "X-Acme-Sig", genericSignaturePrefix: "sha256=" });
    const body = '{"eventType":"acme.ping"}';
    const sig = `sha256=${createHmac("sha256", "s3").update(body).digest("hex")}`;
    const res = await fetch(ep.webhookUrl, { method: "POST", headers: { "x-acme-sig": sig }, body });
    expect(await captured(ep, ((await res.json()) as { id: string }).id)).toMatchObject({
      verification: "verified",
      canonicalEventType: "acme.ping",
    });
  });

  it("answers Slack's url_verification challenge and keeps the event", async () => {
    const secret = "slack-signing-secret";
    const ep = await endpoint({ provider: "slack", secret });
    const body = JSON.stringify({ token: "x", challenge: "ch4ll3ng3", type: "url_verification" });
    const ts = Math.floor(Date.now() / 1000);
    const sig = `v0=${createHmac("sha256", secret).update(`v0:${ts}:${body}`).digest("hex")}`;
    const res = await fetch(ep.webhookUrl, {
      method: "POST",
      headers: { "content-type": "application/json", "x-slack-request-timestamp": String(ts), "x-slack-signature": sig },
      body,
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ challenge: "ch4ll3ng3" });
    const list = await t.a.get(`/v1/endpoints/${ep.id}/events`);
    expect(list.body.items[0]).toMatchObject({ verification: "verified", canonicalEventType: "url_verification", provider: "slack" });
  });

  it("marks captures unverified when no secret is set", async () => {
    const ep = await endpoint({});
    const res = await fetch(ep.webhookUrl, { method: "POST", headers: { "stripe-signature": "t=1,v1=00" }, body: "{}" });
    expect(await captured(ep, ((await res.json()) as { id: string }).id)).toMatchObject({ provider: "stripe", verification: "unverified" });
  });
});
