import { generateKeyPairSync } from "node:crypto";
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { PROVIDERS, providers, signatureHeaderNames, signHeaders, verifySignature, type HeaderPair, type Provider } from "./index.js";
import { NOW_MS, TIMED_PASSED, UNTIMED_PASSED, verdict } from "./testing/index.js";

const SECRET = Buffer.from("whsec_dGhpcyBpcyBhIHRlc3Qga2V5IGZvciByZXBsYXk=");
const BODY = Buffer.from('{"type":"replayed.event","id":"evt_9"}');
const GENERIC = { genericSignatureHeader: "X-Acme-Signature", genericSignaturePrefix: "sha256=" };

/** What each provider sent a day ago: stale signatures among ordinary headers. */
const ORIGINALS: Record<Provider, HeaderPair[]> = {
  stripe: [["stripe-signature", `t=1,v1=${"0".repeat(64)}`]],
  github: [["X-GitHub-Event", "push"], ["X-Hub-Signature", "sha1=00"], ["X-Hub-Signature-256", "sha256=00"]],
  slack: [["X-Slack-Request-Timestamp", "1"], ["X-Slack-Signature", "v0=00"]],
  shopify: [["X-Shopify-Topic", "orders/create"], ["X-Shopify-Hmac-Sha256", "AA=="]],
  standard_webhooks: [["svix-id", "msg_keep"], ["svix-timestamp", "1"], ["svix-signature", "v1,AA=="]],
  generic: [["x-acme-signature", "sha256=00"]],
  vercel: [["x-vercel-signature", "00"]],
  sentry: [["Sentry-Hook-Resource", "issue"], ["Sentry-Hook-Signature", "00"]],
  lemon_squeezy: [["X-Event-Name", "order_created"], ["X-Signature", "00"]],
  woocommerce: [["X-WC-Webhook-Topic", "order.created"], ["X-WC-Webhook-Signature", "AA=="]],
  coinbase_commerce: [["X-CC-Webhook-Signature", "00"]],
  meta: [["User-Agent", "facebookexternalua"], ["X-Hub-Signature-256", "sha256=00"], ["X-Hub-Signature", "sha1=00"]],
  clerk: [["svix-id", "msg_keep"], ["svix-timestamp", "1"], ["svix-signature", "v1,AA=="]],
  resend: [["svix-id", "msg_keep"], ["svix-timestamp", "1"], ["svix-signature", "v1,AA=="]],
  zoom: [["x-zm-request-timestamp", "1"], ["x-zm-signature", "v0=00"]],
  twitch: [["Twitch-Eventsub-Message-Id", "msg-keep"], ["Twitch-Eventsub-Message-Timestamp", "2026-01-01T00:00:00.123456789Z"], ["Twitch-Eventsub-Message-Signature", "sha256=00"]],
  gitlab: [["X-Gitlab-Event", "Push Hook"], ["X-Gitlab-Token", "a-token-since-rotated"]],
  bitbucket: [["X-Event-Key", "repo:push"], ["X-Hub-Signature", `sha256=${"0".repeat(64)}`]],
  linear: [["Linear-Event", "Issue"], ["Linear-Signature", "0".repeat(64)]],
  intercom: [["X-Hub-Signature", `sha1=${"0".repeat(40)}`]],
  typeform: [["Typeform-Signature", `sha256=${Buffer.alloc(32).toString("base64")}`]],
  calendly: [["Calendly-Webhook-Signature", `t=1,v1=${"0".repeat(64)}`]],
  hubspot: [["X-HubSpot-Request-Timestamp", "1000"], ["X-HubSpot-Signature-v3", Buffer.alloc(32).toString("base64")]],
  twilio: [["X-Twilio-Signature", "AAAAAAAAAAAAAAAAAAAAAAAAAAA="]],
  square: [["x-square-hmacsha256-signature", "AA=="], ["x-square-signature", "AA=="]],
  paddle: [["Paddle-Signature", `ts=1;h1=${"0".repeat(64)}`]],
  discord: [["X-Signature-Ed25519", "00".repeat(64)], ["X-Signature-Timestamp", "1"]],
  sendgrid: [["X-Twilio-Email-Event-Webhook-Signature", "MEUCIQ=="], ["X-Twilio-Email-Event-Webhook-Timestamp", "1"]],
  mailgun: [],
};

/** Discord re-signs with the hex seed of an Ed25519 key and verifies with the hex public key. */
function ed25519Secrets(): Secrets {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  return {
    sign: Buffer.from(privateKey.export({ format: "der", type: "pkcs8" }).subarray(-32).toString("hex")),
    verify: Buffer.from(publicKey.export({ format: "der", type: "spki" }).subarray(-32).toString("hex")),
  };
}

/** SendGrid re-signs with the base64 PKCS#8 DER of a P-256 key and verifies with the base64 SPKI DER public key. */
function p256Secrets(): Secrets {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return {
    sign: Buffer.from(privateKey.export({ format: "der", type: "pkcs8" }).toString("base64")),
    verify: Buffer.from(publicKey.export({ format: "der", type: "spki" }).toString("base64")),
  };
}

interface Secrets {
  sign: Buffer;
  verify: Buffer;
}

/** Asymmetric schemes: the target's private key signs the replay, its public key verifies it. Every other scheme uses SECRET for both. */
const KEYS = { discord: ed25519Secrets(), sendgrid: p256Secrets() } satisfies Partial<Record<Provider, Secrets>>;
const secrets = (provider: Provider): Secrets => (KEYS as Partial<Record<Provider, Secrets>>)[provider] ?? { sign: SECRET, verify: SECRET };

/** Linear's freshness is the signed body's webhookTimestamp (ms), which a replay keeps: here, a body sent at `sentMs`. */
const linearBody = (sentMs: number) => Buffer.from(JSON.stringify({ type: "Issue", action: "create", webhookTimestamp: sentMs }));

/** Bodies other than BODY, for schemes that read their timestamp from the body: the body a delivery at `sentMs` carries. */
const BODIES = { linear: linearBody } satisfies Partial<Record<Provider, (sentMs: number) => Buffer>>;
const bodyAt = (provider: Provider, sentMs: number): Buffer => (BODIES as Partial<Record<Provider, (sentMs: number) => Buffer>>)[provider]?.(sentMs) ?? BODY;

/**
 * Providers whose signature is in the body, not in a header: sign writes nothing, the replay
 * carries the original signature unchanged, and their own tests cover the scheme. Checked below
 * to be exactly the providers whose sign returns [], so that this list cannot grow unnoticed.
 */
const HEADERLESS = {
  mailgun: "the signature object (timestamp, token, signature) is inside the body, which a replay sends byte for byte",
} satisfies Partial<Record<Provider, string>>;
const HEADERLESS_NAMES = Object.keys(HEADERLESS) as Provider[];
const signsHeaders = PROVIDERS.filter((provider) => !HEADERLESS_NAMES.includes(provider));

/** The replay flow the integrator runs: drop the listed headers, append the fresh ones. */
function resign(provider: Provider, nowMs: number, body: Uint8Array = bodyAt(provider, nowMs)): HeaderPair[] {
  const original: HeaderPair[] = [["Content-Type", "application/json"], ...ORIGINALS[provider]];
  const drop = new Set(signatureHeaderNames(provider, GENERIC.genericSignatureHeader));
  return [
    ...original.filter(([name]) => !drop.has(name.toLowerCase())),
    ...signHeaders({ provider, secret: secrets(provider).sign, body, nowMs, headers: original, ...GENERIC }),
  ];
}

describe("signatureHeaderNames", () => {
  it("lists lower-case names per provider", () => {
    expect(signatureHeaderNames("stripe")).toEqual(["stripe-signature"]);
    expect(signatureHeaderNames("github")).toEqual(["x-hub-signature-256", "x-hub-signature"]);
    expect(signatureHeaderNames("slack")).toEqual(["x-slack-signature", "x-slack-request-timestamp"]);
    expect(signatureHeaderNames("shopify")).toEqual(["x-shopify-hmac-sha256"]);
    expect(signatureHeaderNames("standard_webhooks").sort()).toEqual(
      ["svix-id", "svix-signature", "svix-timestamp", "webhook-id", "webhook-signature", "webhook-timestamp"].sort(),
    );
    expect(signatureHeaderNames("generic")).toEqual(["x-signature"]);
    expect(signatureHeaderNames("generic", "X-Acme-Signature")).toEqual(["x-acme-signature"]);
    expect(signatureHeaderNames("generic", "")).toEqual(["x-signature"]);
  });

  it("returns a fresh array each time", () => {
    signatureHeaderNames("stripe").push("mutated");
    expect(signatureHeaderNames("stripe")).toEqual(["stripe-signature"]);
  });

  it.each(signsHeaders)("covers every header signHeaders sets for %s", (provider) => {
    const names = signatureHeaderNames(provider, GENERIC.genericSignatureHeader);
    for (const original of [[], ORIGINALS[provider]]) {
      const signed = signHeaders({ provider, secret: secrets(provider).sign, body: bodyAt(provider, NOW_MS), nowMs: NOW_MS, headers: original, ...GENERIC });
      expect(signed.length).toBeGreaterThan(0);
      for (const [name] of signed) expect(names).toContain(name.toLowerCase());
    }
  });

  it("HEADERLESS is exactly the providers whose signHeaders sets no header, each with a reason and its own tests", () => {
    const headerless = PROVIDERS.filter(
      (provider) =>
        signHeaders({ provider, secret: secrets(provider).sign, body: bodyAt(provider, NOW_MS), nowMs: NOW_MS, headers: ORIGINALS[provider], ...GENERIC }).length === 0,
    );
    expect(headerless).toEqual(HEADERLESS_NAMES);
    for (const provider of HEADERLESS_NAMES) {
      expect(HEADERLESS[provider as keyof typeof HEADERLESS]).toMatch(/\S/);
      expect(existsSync(new URL(`./providers/${provider.replaceAll("_", "-")}.test.ts`, import.meta.url))).toBe(true);
    }
  });

  it.each(HEADERLESS_NAMES)("%s: signHeaders sets nothing and signatureHeaderNames drops nothing", (provider) => {
    for (const original of [[], ORIGINALS[provider]]) {
      expect(signHeaders({ provider, secret: SECRET, body: BODY, nowMs: NOW_MS, headers: original, ...GENERIC })).toEqual([]);
    }
    expect(signatureHeaderNames(provider, GENERIC.genericSignatureHeader)).toEqual([]);
  });
});

describe("re-signing a replay", () => {
  it.each(signsHeaders)("%s: the stale signature fails, the re-signed request verifies at the new time", (provider) => {
    const nowMs = NOW_MS + 86_400_000;
    const stale = [["Content-Type", "application/json"], ...ORIGINALS[provider]] as HeaderPair[];
    const input = { provider, body: bodyAt(provider, nowMs), secret: secrets(provider).verify, nowMs, ...GENERIC };
    expect(verifySignature({ ...input, headers: stale }).verification).toBe("failed");
    const headers = resign(provider, nowMs);
    const checks = providers[provider].toleranceS === undefined ? UNTIMED_PASSED : TIMED_PASSED;
    expect(verifySignature({ ...input, headers })).toEqual({ verification: "verified", checks });
    expect(headers.filter(([name]) => name.toLowerCase() === "content-type")).toHaveLength(1);
  });

  it.each(HEADERLESS_NAMES)("%s: re-signing leaves the request as it was, so the replay's verdict is the original's", (provider) => {
    const nowMs = NOW_MS + 86_400_000;
    const original = [["Content-Type", "application/json"], ...ORIGINALS[provider]] as HeaderPair[];
    const headers = resign(provider, nowMs);
    expect(headers).toEqual(original);
    const input = { provider, body: BODY, secret: SECRET, nowMs, ...GENERIC };
    expect(verifySignature({ ...input, headers })).toEqual(verifySignature({ ...input, headers: original }));
  });

  it("linear: re-signing cannot refresh the webhookTimestamp a day-old body carries", () => {
    const nowMs = NOW_MS + 86_400_000;
    const body = linearBody(NOW_MS);
    const outcome = verifySignature({ provider: "linear", body, secret: SECRET, nowMs, headers: resign("linear", nowMs, body) });
    expect(verdict(outcome)).toBe("timestamp_out_of_tolerance");
    expect(outcome.checks.find((check) => check.name === "signature_matches")?.ok).toBe(true);
  });

  it("stamps timestamped schemes with the fresh time, in whole seconds", () => {
    const nowMs = NOW_MS + 1_999;
    const seconds = String(Math.floor(nowMs / 1000));
    const value = (provider: Provider, name: string) => resign(provider, nowMs).find(([n]) => n.toLowerCase() === name)?.[1];
    expect(value("stripe", "stripe-signature")).toMatch(new RegExp(`^t=${seconds},v1=[0-9a-f]{64}$`));
    expect(value("slack", "x-slack-request-timestamp")).toBe(seconds);
    expect(value("standard_webhooks", "svix-timestamp")).toBe(seconds);
    expect(value("standard_webhooks", "svix-id")).toBe("msg_keep");
  });
});
