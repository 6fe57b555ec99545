import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalEventType, detectProvider, providers, signHeaders, type HeaderPair } from "../index.js";
import { NOW_MS, UNTIMED_PASSED, verdict, verifierFor } from "../testing/index.js";

/*
 * No Mailgun library on npm verifies webhooks (mailgun.js sends mail), so these follow the recipe
 * and the signature object Mailgun publishes at
 * https://documentation.mailgun.com/docs/mailgun/user-manual/webhooks/securing-webhooks:
 * hex HMAC-SHA256 of timestamp + token, keyed with the webhook signing key. The token and
 * timestamp are that page's; its signature value is a placeholder (it ends in 12345) made with
 * no published key, so the signature here is computed with a test key by that recipe.
 */
const SIGNING_KEY = "key-3ax6xnjp29jd6fds4gc373sgvjxteol0";
const PRIMARY_KEY = "key-primary-account-signing-key-000000";
const TOKEN = "e0b5477167110d68991efc6b9f89f0a11066af27834600e123";
const TIMESTAMP = "1770920772";
const mac = (key: string, timestamp = TIMESTAMP, token = TOKEN) => createHmac("sha256", key).update(timestamp + token).digest("hex");

function jsonBody(signature: Record<string, string>, event = "delivered"): Buffer {
  return Buffer.from(
    JSON.stringify({ signature, "event-data": { event, timestamp: 1770920772.5, id: "CPgfbmQMTCKtHW6uIWtuVe", recipient: "alice@example.com" } }),
  );
}

const BODY = jsonBody({ token: TOKEN, timestamp: TIMESTAMP, signature: mac(SIGNING_KEY) });
const verify = verifierFor("mailgun", SIGNING_KEY, BODY);
const CONTENT_TYPE: HeaderPair[] = [["Content-Type", "application/json"]];

describe("mailgun verification", () => {
  it("accepts the documented signature object signed with the webhook signing key", () => {
    expect(verify(CONTENT_TYPE)).toEqual({ verification: "verified", checks: UNTIMED_PASSED });
  });

  it("rejects another key and a tampered token or timestamp", () => {
    expect(verdict(verify(CONTENT_TYPE, { secret: Buffer.from("key-other") }))).toBe("signature_mismatch");
    expect(verdict(verify(CONTENT_TYPE, { body: jsonBody({ token: TOKEN.replace("e0", "e1"), timestamp: TIMESTAMP, signature: mac(SIGNING_KEY) }) }))).toBe(
      "signature_mismatch",
    );
    expect(verdict(verify(CONTENT_TYPE, { body: jsonBody({ token: TOKEN, timestamp: "1770920773", signature: mac(SIGNING_KEY) }) }))).toBe("signature_mismatch");
  });

  it("does not sign the event data: a changed event still verifies, as Mailgun documents", () => {
    const changed = jsonBody({ token: TOKEN, timestamp: TIMESTAMP, signature: mac(SIGNING_KEY) }, "failed");
    expect(verdict(verify(CONTENT_TYPE, { body: changed }))).toBe("verified");
  });

  it("accepts a subaccount's parent-signature with the primary account's key", () => {
    const body = jsonBody({ token: TOKEN, timestamp: TIMESTAMP, signature: mac("key-subaccount"), "parent-signature": mac(PRIMARY_KEY) });
    expect(verdict(verify(CONTENT_TYPE, { body, secret: Buffer.from(PRIMARY_KEY) }))).toBe("verified");
    expect(verdict(verify(CONTENT_TYPE, { body, secret: Buffer.from("key-subaccount") }))).toBe("verified");
    expect(verdict(verify(CONTENT_TYPE, { body, secret: Buffer.from(SIGNING_KEY) }))).toBe("signature_mismatch");
  });

  it("reads a legacy form webhook's top-level fields", () => {
    const form = Buffer.from(new URLSearchParams({ event: "delivered", recipient: "alice@example.com", token: TOKEN, timestamp: TIMESTAMP, signature: mac(SIGNING_KEY) }).toString());
    const headers: HeaderPair[] = [["Content-Type", "application/x-www-form-urlencoded"]];
    expect(verdict(verify(headers, { body: form }))).toBe("verified");
    expect(canonicalEventType("mailgun", headers, form)).toBe("delivered");
  });

  it("judges no timestamp age: Mailgun documents no window (the documented timestamp is months before NOW_MS)", () => {
    expect(NOW_MS / 1000 - Number(TIMESTAMP)).toBeGreaterThan(86_400 * 30);
    expect(verify(CONTENT_TYPE).checks.map((check) => check.name)).not.toContain("timestamp_fresh");
    expect(providers.mailgun.toleranceS).toBeUndefined();
  });

  it("reports a body without a signature as missing", () => {
    expect(verdict(verify(CONTENT_TYPE, { body: Buffer.from('{"event-data":{"event":"delivered"}}') }))).toBe("missing_signature");
    expect(verdict(verify([], { body: Buffer.from("") }))).toBe("missing_signature");
    expect(verdict(verify([], { body: Buffer.from("not json, not a form") }))).toBe("missing_signature");
  });

  it.each([
    ["no signature", { token: TOKEN, timestamp: TIMESTAMP }],
    ["a short signature", { token: TOKEN, timestamp: TIMESTAMP, signature: "abcd" }],
    ["a signature that is not hex", { token: TOKEN, timestamp: TIMESTAMP, signature: "z".repeat(64) }],
    ["no token", { timestamp: TIMESTAMP, signature: mac(SIGNING_KEY) }],
    ["a non-numeric timestamp", { token: TOKEN, timestamp: "yesterday", signature: mac(SIGNING_KEY) }],
  ])("reports a malformed signature object (%s)", (_, signature) => {
    expect(verdict(verify(CONTENT_TYPE, { body: jsonBody(signature) }))).toBe("malformed_signature");
  });
});

describe("mailgun detection, event type and re-signing", () => {
  it("is never detected: Mailgun sends no header of its own", () => {
    expect(providers.mailgun.detect([["User-Agent", "mailgun/treq-16.12.0"], ...CONTENT_TYPE])).toBe(false);
    expect(detectProvider(CONTENT_TYPE)).toBeUndefined();
  });

  it("names the event by event-data.event", () => {
    expect(canonicalEventType("mailgun", CONTENT_TYPE, BODY)).toBe("delivered");
  });

  it("writes no header: the signature travels in the body", () => {
    expect(signHeaders({ provider: "mailgun", secret: Buffer.from(SIGNING_KEY), body: BODY, nowMs: NOW_MS, headers: [] })).toEqual([]);
    expect(providers.mailgun.signedHeaderNames({})).toEqual([]);
  });
});
