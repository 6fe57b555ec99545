import { describe, it, expect } from "vitest";
import { createHmac, randomBytes } from "node:crypto";
import Stripe from "stripe";
import { sign as octokitSign, verify as octokitVerify } from "@octokit/webhooks-methods";
import { Webhook } from "standardwebhooks";
import {
  canonicalEventType,
  detectProvider,
  signHeaders,
  signatureHeaderNames,
  slackUrlVerificationChallenge,
  verifySignature,
  type HeaderPair,
  type Provider,
  type VerifyInput,
} from "./index.js";

const NOW = 1_790_000_000_000;
const enc = (s: string) => Buffer.from(s, "utf8");
const stripeClient = new Stripe("sk_test_x");

function verify(provider: Provider, headers: HeaderPair[], body: Uint8Array, secret: string, extra: Partial<VerifyInput> = {}) {
  return verifySignature({ provider, headers, body, secret: enc(secret), nowMs: NOW, ...extra });
}
const reason = (o: ReturnType<typeof verifySignature>) => (o.verification === "failed" ? o.reason : "verified");

const bodies = {
  json: enc('{"id":"evt_1","object":"event","type":"invoice.paid"}'),
  binary: Buffer.concat([Buffer.from([0, 0xff, 0xfe, 0xc3, 0x28, 13, 10]), randomBytes(64)]),
};

describe("Stripe (signatures made by stripe's own library)", () => {
  const secret = "whsec_test_secret";
  const header = (payload: string, timestamp = NOW / 1000, s = secret) =>
    stripeClient.webhooks.generateTestHeaderString({ payload, secret: s, timestamp });

  it("verifies, and refuses a wrong secret, a missing or malformed header, a stale or future timestamp", () => {
    const payload = bodies.json.toString();
    expect(reason(verify("stripe", [["Stripe-Signature", header(payload)]], bodies.json, secret))).toBe("verified");
    expect(reason(verify("stripe", [["stripe-signature", header(payload)]], bodies.json, secret))).toBe("verified");
    expect(reason(verify("stripe", [["Stripe-Signature", header(payload, NOW / 1000, "whsec_other")]], bodies.json, secret))).toBe(
      "signature_mismatch",
    );
    expect(reason(verify("stripe", [], bodies.json, secret))).toBe("missing_signature");
    expect(reason(verify("stripe", [["Stripe-Signature", "v1=abc"]], bodies.json, secret))).toBe("malformed_signature");
    expect(reason(verify("stripe", [["Stripe-Signature", "t=1,v0=00"]], bodies.json, secret))).toBe("malformed_signature");
    expect(reason(verify("stripe", [["Stripe-Signature", header(payload, NOW / 1000 - 360)]], bodies.json, secret))).toBe(
      "timestamp_out_of_tolerance",
    );
    expect(reason(verify("stripe", [["Stripe-Signature", header(payload, NOW / 1000 + 360)]], bodies.json, secret))).toBe(
      "timestamp_out_of_tolerance",
    );
  });

  it("accepts any of several v1 signatures (secret rolling)", () => {
    const t = NOW / 1000;
    const good = createHmac("sha256", secret).update(`${t}.`).update(bodies.json).digest("hex");
    const value = `t=${t},v1=${"0".repeat(64)},v1=${good},v0=${"1".repeat(64)}`;
    expect(reason(verify("stripe", [["Stripe-Signature", value]], bodies.json, secret))).toBe("verified");
  });

  it("signs so that stripe's own library verifies", () => {
    const [[name, value]] = signHeaders({ provider: "stripe", secret: enc(secret), body: bodies.json, nowMs: Date.now(), headers: [] }) as [HeaderPair];
    expect(name).toBe("Stripe-Signature");
    expect(stripeClient.webhooks.constructEvent(bodies.json, value, secret).type).toBe("invoice.paid");
  });
});

describe("GitHub (signatures made by @octokit/webhooks-methods)", () => {
  const secret = "gh-secret";
  it("verifies, refuses wrong secret, missing and malformed", async () => {
    const payload = '{"action":"opened","number":1}';
    const sig = await octokitSign(secret, payload);
    expect(reason(verify("github", [["X-Hub-Signature-256", sig]], enc(payload), secret))).toBe("verified");
    expect(reason(verify("github", [["X-Hub-Signature-256", await octokitSign("nope", payload)]], enc(payload), secret))).toBe(
      "signature_mismatch",
    );
    expect(reason(verify("github", [["X-Hub-Signature", "sha1=00"]], enc(payload), secret))).toBe("missing_signature");
    expect(reason(verify("github", [["X-Hub-Signature-256", "md5=abc"]], enc(payload), secret))).toBe("malformed_signature");
    expect(reason(verify("github", [["X-Hub-Signature-256", "sha256=zz"]], enc(payload), secret))).toBe("malformed_signature");
  });

  it("verifies binary bodies byte for byte", () => {
    const sig = `sha256=${createHmac("sha256", secret).update(bodies.binary).digest("hex")}`;
    expect(reason(verify("github", [["x-hub-signature-256", sig]], bodies.binary, secret))).toBe("verified");
    const altered = Buffer.from(bodies.binary);
    altered[0] = 1;
    expect(reason(verify("github", [["x-hub-signature-256", sig]], altered, secret))).toBe("signature_mismatch");
  });

  it("signs so that octokit verifies", async () => {
    const payload = '{"zen":"Keep it logically awesome."}';
    const headers = signHeaders({ provider: "github", secret: enc(secret), body: enc(payload), nowMs: NOW, headers: [] });
    const sig256 = headers.find(([n]) => n === "X-Hub-Signature-256")![1];
    expect(await octokitVerify(secret, payload, sig256)).toBe(true);
    const sha1 = headers.find(([n]) => n === "X-Hub-Signature")![1];
    expect(sha1).toBe(`sha1=${createHmac("sha1", secret).update(payload).digest("hex")}`);
  });
});

describe("Slack (the documented v0 algorithm)", () => {
  const secret = "8f742231b10e8888abcd99yyyzzz85a5";
  const signed = (body: Uint8Array, t: number, s = secret): HeaderPair[] => [
    ["X-Slack-Request-Timestamp", String(t)],
    ["X-Slack-Signature", `v0=${createHmac("sha256", s).update(`v0:${t}:`).update(body).digest("hex")}`],
  ];
  it("verifies and refuses wrong secret, missing, malformed, stale", () => {
    const body = enc("token=xyz&team_id=T1&command=/weather");
    const t = NOW / 1000;
    expect(reason(verify("slack", signed(body, t), body, secret))).toBe("verified");
    expect(reason(verify("slack", signed(body, t, "other"), body, secret))).toBe("signature_mismatch");
    expect(reason(verify("slack", [["X-Slack-Request-Timestamp", String(t)]], body, secret))).toBe("missing_signature");
    expect(reason(verify("slack", [["X-Slack-Signature", "v0=00"]], body, secret))).toBe("malformed_signature");
    expect(reason(verify("slack", [["X-Slack-Request-Timestamp", String(t)], ["X-Slack-Signature", "v1=00"]], body, secret))).toBe(
      "malformed_signature",
    );
    expect(reason(verify("slack", signed(body, t - 301), body, secret))).toBe("timestamp_out_of_tolerance");
  });

  it("signs what it verifies", () => {
    const body = enc('{"type":"event_callback"}');
    const headers = signHeaders({ provider: "slack", secret: enc(secret), body, nowMs: NOW, headers: [] });
    expect(reason(verify("slack", headers, body, secret))).toBe("verified");
    expect(headers).toEqual(signed(body, NOW / 1000));
  });

  it("answers url_verification and names event types", () => {
    const challenge = enc('{"token":"t","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}');
    expect(slackUrlVerificationChallenge(challenge)).toBe("3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P");
    expect(slackUrlVerificationChallenge(enc('{"type":"event_callback"}'))).toBeUndefined();
    expect(canonicalEventType("slack", [], challenge)).toBe("url_verification");
    expect(canonicalEventType("slack", [], enc('{"type":"event_callback","event":{"type":"app_mention"}}'))).toBe("app_mention");
    const form = enc(`payload=${encodeURIComponent('{"type":"block_actions"}')}`);
    expect(canonicalEventType("slack", [["Content-Type", "application/x-www-form-urlencoded"]], form)).toBe("block_actions");
  });
});

describe("Shopify (the documented base64 HMAC)", () => {
  const secret = "shpss_secret";
  it("verifies, refuses wrong secret, missing, malformed", () => {
    const body = enc('{"id":820982911946154508}');
    const sig = createHmac("sha256", secret).update(body).digest("base64");
    expect(reason(verify("shopify", [["X-Shopify-Hmac-Sha256", sig]], body, secret))).toBe("verified");
    expect(reason(verify("shopify", [["X-Shopify-Hmac-Sha256", createHmac("sha256", "x").update(body).digest("base64")]], body, secret))).toBe(
      "signature_mismatch",
    );
    expect(reason(verify("shopify", [], body, secret))).toBe("missing_signature");
    expect(reason(verify("shopify", [["X-Shopify-Hmac-Sha256", "not base64!"]], body, secret))).toBe("malformed_signature");
    expect(reason(verify("shopify", [["X-Shopify-Hmac-Sha256", "AAAA"]], body, secret))).toBe("malformed_signature");
    const headers = signHeaders({ provider: "shopify", secret: enc(secret), body, nowMs: NOW, headers: [] });
    expect(headers).toEqual([["X-Shopify-Hmac-Sha256", sig]]);
    expect(canonicalEventType("shopify", [["X-Shopify-Topic", "orders/create"]], body)).toBe("orders/create");
  });
});

describe("Standard Webhooks / Svix (signatures made by the standardwebhooks library)", () => {
  const secret = `whsec_${randomBytes(24).toString("base64")}`;
  const wh = new Webhook(secret);
  const payload = '{"type":"user.created","data":{"id":1}}';
  const headersAt = (date: Date, id = "msg_1", family = "webhook"): HeaderPair[] => [
    [`${family}-id`, id],
    [`${family}-timestamp`, String(Math.floor(date.getTime() / 1000))],
    [`${family}-signature`, wh.sign(id, date, payload)],
  ];

  it("verifies both header families, and refuses wrong secret, missing, malformed, stale", () => {
    const now = new Date(NOW);
    expect(reason(verify("standard_webhooks", headersAt(now), enc(payload), secret))).toBe("verified");
    expect(reason(verify("standard_webhooks", headersAt(now, "msg_2", "svix"), enc(payload), secret))).toBe("verified");
    expect(reason(verify("standard_webhooks", headersAt(now), enc(payload), `whsec_${randomBytes(24).toString("base64")}`))).toBe(
      "signature_mismatch",
    );
    expect(reason(verify("standard_webhooks", headersAt(now).slice(0, 2), enc(payload), secret))).toBe("missing_signature");
    expect(reason(verify("standard_webhooks", headersAt(now).slice(1), enc(payload), secret))).toBe("malformed_signature");
    expect(
      reason(verify("standard_webhooks", [...headersAt(now).slice(0, 2), ["webhook-signature", "v2,abc"]], enc(payload), secret)),
    ).toBe("malformed_signature");
    expect(reason(verify("standard_webhooks", headersAt(new Date(NOW - 400_000)), enc(payload), secret))).toBe(
      "timestamp_out_of_tolerance",
    );
  });

  it("accepts a list of signatures with other versions mixed in", () => {
    const [id, ts, sig] = headersAt(new Date(NOW)) as [HeaderPair, HeaderPair, HeaderPair];
    const list: HeaderPair = ["webhook-signature", `v1a,xyz v1,${Buffer.alloc(32).toString("base64")} ${sig[1]}`];
    expect(reason(verify("standard_webhooks", [id, ts, list], enc(payload), secret))).toBe("verified");
  });

  it("signs so that the standardwebhooks library verifies, keeping the message id and family", () => {
    const original: HeaderPair[] = [["svix-id", "msg_keep"], ["svix-timestamp", "1"], ["svix-signature", "v1,x"]];
    const headers = signHeaders({ provider: "standard_webhooks", secret: enc(secret), body: enc(payload), nowMs: Date.now(), headers: original });
    expect(headers.map(([n]) => n)).toEqual(["svix-id", "svix-timestamp", "svix-signature"]);
    expect(headers[0]![1]).toBe("msg_keep");
    const asWebhook = Object.fromEntries(headers.map(([n, v]) => [n.replace("svix-", "webhook-"), v]));
    expect(wh.verify(payload, asWebhook)).toEqual({ type: "user.created", data: { id: 1 } });
  });
});

describe("generic HMAC", () => {
  const secret = "generic-secret";
  const body = enc('{"event":"thing.happened"}');
  const hex = createHmac("sha256", secret).update(body).digest("hex");
  it("verifies the configured header and prefix, in either hex case", () => {
    const opts = { genericSignatureHeader: "X-Acme-Signature", genericSignaturePrefix: "sha256=" };
    expect(reason(verify("generic", [["x-acme-signature", `sha256=${hex}`]], body, secret, opts))).toBe("verified");
    expect(reason(verify("generic", [["x-acme-signature", `sha256=${hex.toUpperCase()}`]], body, secret, opts))).toBe("verified");
    expect(reason(verify("generic", [["x-acme-signature", hex]], body, secret, opts))).toBe("malformed_signature");
    expect(reason(verify("generic", [["x-acme-signature", "sha256=xyz"]], body, secret, opts))).toBe("malformed_signature");
    expect(reason(verify("generic", [["x-acme-signature", `sha256=${"0".repeat(64)}`]], body, secret, opts))).toBe(
      "signature_mismatch",
    );
    expect(reason(verify("generic", [["X-Signature", hex]], body, secret, opts))).toBe("missing_signature");
    expect(reason(verify("generic", [["X-Signature", hex]], body, secret))).toBe("verified");
  });

  it("signs what it verifies and names the event type", () => {
    const opts = { genericSignatureHeader: "X-Acme-Signature", genericSignaturePrefix: "sha256=" };
    const headers = signHeaders({ provider: "generic", secret: enc(secret), body, nowMs: NOW, headers: [], ...opts });
    expect(headers).toEqual([["X-Acme-Signature", `sha256=${hex}`]]);
    expect(signatureHeaderNames("generic", "X-Acme-Signature")).toEqual(["x-acme-signature"]);
    expect(canonicalEventType("generic", [], body)).toBe("thing.happened");
    expect(canonicalEventType("generic", [], enc('{"type":5,"eventType":"e"}'))).toBe("e");
    expect(canonicalEventType("generic", [], bodies.binary)).toBe("");
  });
});

describe("provider detection and event types", () => {
  it.each([
    [[["Stripe-Signature", "t=1,v1=0"]], "stripe"],
    [[["X-GitHub-Event", "push"]], "github"],
    [[["x-slack-signature", "v0=0"]], "slack"],
    [[["X-Shopify-Topic", "orders/create"]], "shopify"],
    [[["webhook-id", "msg"]], "standard_webhooks"],
    [[["svix-signature", "v1,x"]], "standard_webhooks"],
    [[["Content-Type", "application/json"]], undefined],
  ] as [HeaderPair[], Provider | undefined][])("%j -> %s", (headers, expected) => {
    expect(detectProvider(headers)).toBe(expected);
  });

  it("names GitHub events with their action", () => {
    expect(canonicalEventType("github", [["X-GitHub-Event", "pull_request"]], enc('{"action":"opened"}'))).toBe("pull_request.opened");
    expect(canonicalEventType("github", [["X-GitHub-Event", "push"]], enc('{"ref":"main"}'))).toBe("push");
    expect(canonicalEventType("stripe", [], bodies.json)).toBe("invoice.paid");
    expect(canonicalEventType("stripe", [], enc(`{"type":"${"x".repeat(500)}"}`))).toHaveLength(200);
  });
});
