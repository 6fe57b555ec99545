import { describe, it, expect } from "vitest";
import Stripe from "stripe";
import { buildTrigger } from "./trigger.js";
import { header, type HeaderPair } from "./headers.js";
import { PROVIDER_NAMES, providerDeliveryId, providerSamples, providers, type Provider } from "./registry.js";
import { jsonScalarReader } from "./json-fields.js";

/**
 * Deduplication's `key: "auto"` (design §17, ADR 0083): each provider's declared id location,
 * read from a request shaped as the provider sends it (its sample, built as `trigger` builds
 * it), against where the provider's documentation puts the id, read here independently.
 */

type Json = Record<string, unknown>;
const h = (name: string) => (headers: readonly HeaderPair[]) => header(headers, name);
const b =
  (...path: string[]) =>
  (_headers: readonly HeaderPair[], json: Json | undefined) => {
    let v: unknown = json;
    for (const k of path) v = v && typeof v === "object" ? (v as Json)[k] : undefined;
    return typeof v === "string" || typeof v === "number" ? String(v) : undefined;
  };
const none = () => undefined;

/** Where each provider's documentation puts the id; `none`: it sends none (or only per batch). */
const documented: Record<Provider, (headers: readonly HeaderPair[], json: Json | undefined) => string | undefined> = {
  generic: none,
  stripe: b("id"),
  meta: none,
  github: h("X-GitHub-Delivery"),
  gitlab: h("X-Gitlab-Event-UUID"),
  bitbucket: h("X-Request-UUID"),
  linear: h("Linear-Delivery"),
  intercom: b("id"),
  typeform: b("event_id"),
  calendly: none,
  hubspot: none,
  slack: b("event_id"),
  shopify: h("X-Shopify-Webhook-Id"),
  zoom: none,
  twitch: h("Twitch-Eventsub-Message-Id"),
  vercel: b("id"),
  sentry: h("Request-ID"),
  lemon_squeezy: none,
  woocommerce: h("X-WC-Webhook-Delivery-ID"),
  coinbase_commerce: b("event", "id"),
  twilio: h("I-Twilio-Idempotency-Token"),
  clerk: h("svix-id"),
  resend: h("svix-id"),
  square: b("event_id"),
  paddle: b("event_id"),
  // Webhook events carry no id; interactions do (below).
  discord: none,
  sendgrid: none,
  mailgun: b("event-data", "id"),
  standard_webhooks: h("webhook-id"),
};

function jsonOf(body: Buffer): Json | undefined {
  try {
    const v: unknown = JSON.parse(body.toString("utf8"));
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : undefined;
  } catch {
    return undefined;
  }
}

describe("the provider's own delivery or event id (dedupe key auto)", () => {
  const withSamples = PROVIDER_NAMES.filter((p) => providerSamples[p].samples.length > 0);

  it.each(withSamples)("%s: every sample request yields the id where the provider documents it", (provider) => {
    for (const sample of providerSamples[provider].samples) {
      const built = buildTrigger({ provider, eventType: sample.eventType, url: "https://hooks.example.com/h/x" });
      if (!built.ok) throw new Error(`${provider} ${sample.eventType}: ${built.reason}`);
      const { headers, body } = built.request;
      const expected = documented[provider](headers, jsonOf(body));
      expect(providerDeliveryId(provider, headers, body)).toBe(expected);
      // A provider that declares a location finds an id in each of its own requests.
      if (providers[provider].deliveryId && provider !== "discord") expect(expected).toMatch(/./);
    }
  });

  it("declares a location exactly for the providers documented with one", () => {
    const declared = PROVIDER_NAMES.filter((p) => providers[p].deliveryId !== undefined).sort();
    const documentedWith = PROVIDER_NAMES.filter((p) => documented[p] !== none || p === "discord").sort();
    expect(declared).toEqual(documentedWith);
    for (const p of declared) expect(providers[p].deliveryId!.from).toMatch(/^(header|body) /);
  });

  it("stripe: the id of an event signed by Stripe's own SDK", () => {
    const stripe = new Stripe("sk_test_unused");
    const payload = JSON.stringify({ id: "evt_1PqRsTuVwXyZ", object: "event", type: "invoice.paid", data: { object: { id: "in_123", object: "invoice" } } }, null, 2);
    const signature = stripe.webhooks.generateTestHeaderString({ payload, secret: "whsec_test" });
    const headers: HeaderPair[] = [["Content-Type", "application/json; charset=utf-8"], ["Stripe-Signature", signature]];
    // The event's id, never a nested object's.
    expect(providerDeliveryId("stripe", headers, Buffer.from(payload))).toBe("evt_1PqRsTuVwXyZ");
  });

  it("discord: an interaction's id; a webhook event has none", () => {
    const interaction = Buffer.from(JSON.stringify({ id: "1234567890123456789", application_id: "99", type: 2, token: "t", version: 1, data: { name: "hi" } }));
    expect(providerDeliveryId("discord", [], interaction)).toBe("1234567890123456789");
    expect(providerDeliveryId("discord", [], Buffer.from('{"version":1,"type":1,"event":{"type":"APPLICATION_AUTHORIZED"}}'))).toBeUndefined();
  });

  it("gitlab: Idempotency-Key (the same on every retry) before the event's UUID", () => {
    const headers: HeaderPair[] = [
      ["X-Gitlab-Event", "Push Hook"],
      ["X-Gitlab-Event-UUID", "13792a34-cac6-4fda-95a8-c58e00a3954e"],
      ["Idempotency-Key", "f5e5f430-f57b-4e6e-9fac-d9128cd7232f"],
    ];
    expect(providerDeliveryId("gitlab", headers, Buffer.from("{}"))).toBe("f5e5f430-f57b-4e6e-9fac-d9128cd7232f");
  });

  it("standard webhooks: Svix's own spelling too", () => {
    expect(providerDeliveryId("standard_webhooks", [["svix-id", "msg_2Lf7"]], Buffer.from("{}"))).toBe("msg_2Lf7");
  });

  it("slack: an interactive payload (a form) has no event_id", () => {
    expect(providerDeliveryId("slack", [["Content-Type", "application/x-www-form-urlencoded"]], Buffer.from("payload=%7B%22type%22%3A%22block_actions%22%7D"))).toBeUndefined();
  });

  it("an empty id is none; a body that is not a JSON object has none", () => {
    expect(providerDeliveryId("github", [["X-GitHub-Delivery", "  "]], Buffer.from("{}"))).toBeUndefined();
    expect(providerDeliveryId("stripe", [], Buffer.from('{"id":""}'))).toBeUndefined();
    expect(providerDeliveryId("stripe", [], Buffer.from('[{"id":"evt_1"}]'))).toBeUndefined();
    expect(providerDeliveryId("stripe", [], Buffer.from("not json"))).toBeUndefined();
  });
});

describe("jsonScalarReader", () => {
  it("reads strings, numbers and booleans as sent, and nothing else", () => {
    const body = Buffer.from('{"a":{"b":"x\\"y","n":1.50,"t":true,"z":null,"o":{},"l":[1]},"id":12345678901234567890}');
    expect(jsonScalarReader(["a", "b"])(body)).toBe('x"y');
    expect(jsonScalarReader(["a", "n"])(body)).toBe("1.50");
    expect(jsonScalarReader(["a", "t"])(body)).toBe("true");
    expect(jsonScalarReader(["id"])(body)).toBe("12345678901234567890");
    for (const path of [["a", "z"], ["a", "o"], ["a", "l"], ["a"], ["missing"], ["a", "b", "c"]]) expect(jsonScalarReader(path)(body)).toBeUndefined();
  });
});
