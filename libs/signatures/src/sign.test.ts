import { describe, expect, it } from "vitest";
import { PROVIDERS, providers, signatureHeaderNames, signHeaders, verifySignature, type HeaderPair, type Provider } from "./index.js";
import { NOW_MS, TIMED_PASSED, UNTIMED_PASSED } from "./test-support.js";

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

/** The replay flow the integrator runs: drop the listed headers, append the fresh ones. */
function resign(provider: Provider, nowMs: number): HeaderPair[] {
  const original: HeaderPair[] = [["Content-Type", "application/json"], ...ORIGINALS[provider]];
  const drop = new Set(signatureHeaderNames(provider, GENERIC.genericSignatureHeader));
  return [
    ...original.filter(([name]) => !drop.has(name.toLowerCase())),
    ...signHeaders({ provider, secret: SECRET, body: BODY, nowMs, headers: original, ...GENERIC }),
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

  it.each(PROVIDERS)("covers every header signHeaders sets for %s", (provider) => {
    const names = signatureHeaderNames(provider, GENERIC.genericSignatureHeader);
    for (const original of [[], ORIGINALS[provider]]) {
      const signed = signHeaders({ provider, secret: SECRET, body: BODY, nowMs: NOW_MS, headers: original, ...GENERIC });
      expect(signed.length).toBeGreaterThan(0);
      for (const [name] of signed) expect(names).toContain(name.toLowerCase());
    }
  });
});

describe("re-signing a replay", () => {
  it.each(PROVIDERS)("%s: the stale signature fails, the re-signed request verifies at the new time", (provider) => {
    const nowMs = NOW_MS + 86_400_000;
    const stale = [["Content-Type", "application/json"], ...ORIGINALS[provider]] as HeaderPair[];
    const input = { provider, body: BODY, secret: SECRET, nowMs, ...GENERIC };
    expect(verifySignature({ ...input, headers: stale }).verification).toBe("failed");
    const headers = resign(provider, nowMs);
    const checks = providers[provider].toleranceS === undefined ? UNTIMED_PASSED : TIMED_PASSED;
    expect(verifySignature({ ...input, headers })).toEqual({ verification: "verified", checks });
    expect(headers.filter(([name]) => name.toLowerCase() === "content-type")).toHaveLength(1);
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
