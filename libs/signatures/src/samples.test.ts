import { generateKeyPairSync } from "node:crypto";
import { verify as octokitVerify } from "@octokit/webhooks-methods";
import { Paddle } from "@paddle/paddle-node-sdk";
import { EventWebhook } from "@sendgrid/eventwebhook";
import { verifyKey } from "discord-interactions";
import { WebhooksHelper } from "square";
import { Webhook } from "standardwebhooks";
import Stripe from "stripe";
import twilioSdk from "twilio";
import { describe, expect, it } from "vitest";
import {
  buildTrigger,
  canonicalEventType,
  detectProvider,
  PROVIDER_NAMES,
  providerCatalog,
  providerSamples,
  providers,
  sampleEventTypes,
  verifySignature,
  type HeaderPair,
  type Provider,
  type TriggerRequest,
} from "./index.js";

const URL = "https://hooks.example.com/h/0193b0a4-7a1e-7c3d-9f00-1234567890ab";
const HMAC_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

const ed25519 = generateKeyPairSync("ed25519");
const DISCORD = {
  sign: ed25519.privateKey.export({ format: "pem", type: "pkcs8" }).toString(),
  verify: ed25519.publicKey.export({ format: "der", type: "spki" }).subarray(-32).toString("hex"),
};
const p256 = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
const SENDGRID = {
  sign: p256.privateKey.export({ format: "pem", type: "pkcs8" }).toString(),
  verify: p256.publicKey.export({ format: "der", type: "spki" }).toString("base64"),
};

/** What signs and what verifies: the same secret, except for the public-key schemes. */
function keysOf(provider: Provider): { sign: string; verify: string } {
  if (provider === "discord") return DISCORD;
  if (provider === "sendgrid") return SENDGRID;
  return { sign: HMAC_SECRET, verify: HMAC_SECRET };
}

const valueOf = (headers: readonly HeaderPair[], name: string) => headers.find(([n]) => n.toLowerCase() === name.toLowerCase())?.[1] ?? "";
const stripe = new Stripe("sk_test_x");
const paddle = new Paddle("pdl_sdbx_apikey_test");

/**
 * The provider's own library's verdict on a triggered request, where one is on npm (the packages
 * the signature tests use); undefined where none is.
 */
async function sdkAccepts(provider: Provider, req: TriggerRequest, secret: string): Promise<boolean | undefined> {
  const body = req.body.toString("utf8");
  const h = (name: string) => valueOf(req.headers, name);
  switch (provider) {
    case "stripe":
      return stripe.webhooks.constructEvent(req.body, h("Stripe-Signature"), secret).id.startsWith("evt_");
    case "github":
      return octokitVerify(secret, body, h("X-Hub-Signature-256"));
    case "twilio":
      return twilioSdk.validateRequest(secret, h("X-Twilio-Signature"), URL, Object.fromEntries(new URLSearchParams(body)));
    case "square":
      return WebhooksHelper.verifySignature({ requestBody: body, signatureHeader: h("x-square-hmacsha256-signature"), signatureKey: secret, notificationUrl: URL });
    case "paddle":
      return paddle.webhooks.isSignatureValid(body, secret, h("Paddle-Signature"));
    case "discord":
      return verifyKey(body, h("X-Signature-Ed25519"), h("X-Signature-Timestamp"), secret);
    case "sendgrid": {
      const ew = new EventWebhook();
      return ew.verifySignature(ew.convertPublicKeyToECDSA(secret), body, h("X-Twilio-Email-Event-Webhook-Signature"), h("X-Twilio-Email-Event-Webhook-Timestamp"));
    }
    case "standard_webhooks":
    case "clerk":
    case "resend": {
      // The reference library reads the webhook- spelling; Svix senders use svix-, the same scheme.
      const family = h("webhook-id") ? "webhook" : "svix";
      const headers = { "webhook-id": h(`${family}-id`), "webhook-timestamp": h(`${family}-timestamp`), "webhook-signature": h(`${family}-signature`) };
      return new Webhook(secret).verify(body, headers) !== undefined;
    }
    default:
      return undefined;
  }
}

/** Providers whose headers are every Svix sender's or none of their own: the endpoint names them (their files say why). */
const CONFIGURED_ONLY: ReadonlySet<Provider> = new Set(["intercom", "mailgun", "clerk", "resend"]);

const cases = PROVIDER_NAMES.flatMap((provider) => sampleEventTypes(provider).map((eventType) => [provider, eventType] as const));

describe("trigger samples", () => {
  it("cover every provider: at least 3 event types for the common ones, 1 for the rest, none for generic", () => {
    const three: Provider[] = ["stripe", "github", "shopify", "slack", "twilio", "gitlab", "paddle", "linear", "square", "standard_webhooks"];
    for (const provider of PROVIDER_NAMES) {
      const types = sampleEventTypes(provider);
      if (provider === "generic") expect(types).toEqual([]);
      else expect(types.length, provider).toBeGreaterThanOrEqual(three.includes(provider) ? 3 : 1);
      expect(new Set(types).size, `${provider} lists a type twice`).toBe(types.length);
    }
    expect(Object.keys(providerSamples)).toEqual([...PROVIDER_NAMES]);
    expect(providerCatalog().find((p) => p.name === "stripe")!.sampleEventTypes).toContain("invoice.paid");
  });

  it.each(cases)("%s %s: accepted by the provider's own library (else our verifier), detected with its event type", async (provider, eventType) => {
    const keys = keysOf(provider);
    const built = buildTrigger({ provider, eventType, secret: Buffer.from(keys.sign), url: URL });
    expect(built.ok).toBe(true);
    const req = (built as { request: TriggerRequest }).request;
    const sdk = await sdkAccepts(provider, req, keys.verify);
    if (sdk !== undefined) expect(sdk).toBe(true);
    const ours = verifySignature({ provider, headers: req.headers, body: req.body, secret: Buffer.from(keys.verify), url: URL, nowMs: Date.now() });
    expect(ours.verification).toBe("verified");
    // As ingest sees it: the provider from the headers (a generic endpoint), or the one the endpoint names.
    const detected = detectProvider(req.headers);
    if (CONFIGURED_ONLY.has(provider)) expect(detected === undefined || !providers[provider].detect(req.headers)).toBe(true);
    else expect(detected).toBe(provider);
    expect(canonicalEventType(provider, req.headers, req.body)).toBe(eventType);
    expect(req.method).toBe("POST");
    expect(valueOf(req.headers, "content-type")).toMatch(provider === "twilio" ? /^application\/x-www-form-urlencoded/ : /^application\/json/);
  });

  it("is built fresh each time: new ids and the current time", () => {
    const a = buildTrigger({ provider: "stripe", eventType: "invoice.paid", url: URL, nowMs: 1_790_000_000_000 });
    const b = buildTrigger({ provider: "stripe", eventType: "invoice.paid", url: URL, nowMs: 1_790_000_100_000 });
    const [ja, jb] = [a, b].map((r) => JSON.parse((r as { request: TriggerRequest }).request.body.toString()) as { id: string; created: number });
    expect(ja!.id).not.toBe(jb!.id);
    expect([ja!.created, jb!.created]).toEqual([1_790_000_000, 1_790_000_100]);
  });

  it("goes out unsigned without a secret", () => {
    const built = buildTrigger({ provider: "stripe", eventType: "invoice.paid", url: URL });
    expect(built.ok && valueOf(built.request.headers, "Stripe-Signature")).toBe("");
  });
});

describe("trigger set", () => {
  const build = (set: Record<string, unknown>, provider: Provider = "stripe", eventType = "invoice.paid") =>
    buildTrigger({ provider, eventType, set: set as never, secret: Buffer.from(HMAC_SECRET), url: URL });
  const bodyOf = (r: ReturnType<typeof build>) => (r.ok ? r.request.body.toString() : "");

  it("writes dotted paths into a JSON body, before signing", () => {
    const built = build({ "data.object.amount_paid": 500, "data.object.metadata.order": "A-1", "data.object.lines.data.0.amount": 7 });
    const event = JSON.parse(bodyOf(built));
    expect(event.data.object.amount_paid).toBe(500);
    expect(event.data.object.metadata).toEqual({ order: "A-1" });
    expect(event.data.object.lines.data[0].amount).toBe(7);
    const req = (built as { request: TriggerRequest }).request;
    expect(stripe.webhooks.constructEvent(req.body, valueOf(req.headers, "Stripe-Signature"), HMAC_SECRET).type).toBe("invoice.paid");
  });

  it("writes form fields of a form body, and Twilio's signature covers them", () => {
    const built = build({ Body: "changed", NumMedia: 1 }, "twilio", "received");
    const params = Object.fromEntries(new URLSearchParams(bodyOf(built)));
    expect([params.Body, params.NumMedia]).toEqual(["changed", "1"]);
    const req = (built as { request: TriggerRequest }).request;
    expect(twilioSdk.validateRequest(HMAC_SECRET, valueOf(req.headers, "X-Twilio-Signature"), URL, params)).toBe(true);
    expect(build({ Body: { nested: true } }, "twilio", "received")).toMatchObject({ ok: false, reason: "bad_set", refused: { path: "Body", reason: "type" } });
  });

  it("re-signs Mailgun's in-body signature over a changed token", () => {
    const built = build({ "signature.token": "a".repeat(50), "event-data.recipient": "bob@example.com" }, "mailgun", "delivered");
    const req = (built as { request: TriggerRequest }).request;
    expect(JSON.parse(req.body.toString())["event-data"].recipient).toBe("bob@example.com");
    expect(verifySignature({ provider: "mailgun", headers: req.headers, body: req.body, secret: Buffer.from(HMAC_SECRET), nowMs: Date.now() }).verification).toBe("verified");
  });

  it.each([
    ["", "length"],
    ["a".repeat(201), "length"],
    ["data..object", "format"],
    ["data.__proto__.polluted", "format"],
    ["constructor", "format"],
    [Array.from({ length: 17 }, () => "a").join("."), "length"],
    ["id.length", "type"],
    ["data.object.lines.data.5.amount", "range"],
    ["data.object.lines.data.x", "range"],
  ])("refuses the path %j (%s)", (path, reason) => {
    expect(build({ [path]: 1 })).toMatchObject({ ok: false, reason: "bad_set", refused: { path, reason } });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("refuses more than 50 entries", () => {
    const set = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`data.object.metadata.k${i}`, i]));
    expect(build(set)).toMatchObject({ ok: false, reason: "bad_set", refused: { reason: "length" } });
  });

  it("names the known types for an unknown one, and has nothing for generic", () => {
    expect(buildTrigger({ provider: "stripe", eventType: "invoice.nope", url: URL })).toEqual({ ok: false, reason: "unknown_event_type", known: sampleEventTypes("stripe") });
    expect(buildTrigger({ provider: "generic", eventType: "anything", url: URL })).toEqual({ ok: false, reason: "no_samples" });
  });

  it("with verifyWithSecret, refuses a secret that only verifies (a Discord public key)", () => {
    const input = { provider: "discord" as const, eventType: "APPLICATION_AUTHORIZED", url: URL, verifyWithSecret: true };
    expect(buildTrigger({ ...input, secret: Buffer.from(DISCORD.verify) })).toEqual({ ok: false, reason: "cannot_sign" });
    expect(buildTrigger({ ...input, secret: Buffer.from(HMAC_SECRET), provider: "stripe", eventType: "invoice.paid" }).ok).toBe(true);
  });
});
