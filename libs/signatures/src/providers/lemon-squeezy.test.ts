import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalEventType, detectProvider, signHeaders, type HeaderPair } from "../index.js";
import { NOW_MS, UNTIMED_PASSED, verdict, verifierFor } from "../test-support.js";

/**
 * Lemon Squeezy's SDK (@lemonsqueezy/lemonsqueezy.js, not installed) does not verify webhooks;
 * its documentation gives the recipe, a hex HMAC-SHA256 of the raw body in X-Signature
 * (https://docs.lemonsqueezy.com/help/webhooks/signing-requests).
 * The expected header is built here from that recipe with node:crypto, independently of the
 * scheme under test.
 */
const SECRET = "my-lemon-secret";
const PAYLOAD = "{\"meta\":{\"event_name\":\"order_created\",\"custom_data\":{\"customer_id\":25}},\"data\":{\"type\":\"orders\",\"id\":\"1\",\"attributes\":{\"store_id\":1,\"identifier\":\"636f855c-1fb9-4c07-b75c-3a10afef010a\",\"order_number\":1,\"currency\":\"USD\",\"total\":1199,\"status\":\"paid\"}}}";
const BODY = Buffer.from(PAYLOAD, "utf8");
const HEADER = "X-Signature";
/** What Lemon Squeezy sends besides the signature. */
const OTHERS: HeaderPair[] = [["Content-Type", "application/json"], ["X-Event-Name", "order_created"]];

function signature(secret = SECRET, body: Uint8Array = BODY): string {
  return `${createHmac("sha256", secret).update(body).digest("hex")}`;
}

const verify = verifierFor("lemon_squeezy", SECRET, BODY);
const signed = (value = signature()): HeaderPair[] => [...OTHERS, [HEADER, value]];

describe("lemon_squeezy verification", () => {
  it("accepts a signature made by Lemon Squeezy's documented recipe", () => {
    expect(verify(signed())).toEqual({ verification: "verified", checks: UNTIMED_PASSED });
    expect(verdict(verify(signed().map(([n, v]) => [n.toLowerCase(), v] as const)))).toBe("verified");
  });

  it("rejects a wrong secret and a changed body", () => {
    expect(verdict(verify(signed(signature("another-secret"))))).toBe("signature_mismatch");
    expect(verdict(verify(signed(), { secret: Buffer.from("another-secret") }))).toBe("signature_mismatch");
    expect(verdict(verify(signed(), { body: Buffer.from(PAYLOAD + "\n") }))).toBe("signature_mismatch");
  });

  it("reports a missing signature", () => {
    expect(verdict(verify([]))).toBe("missing_signature");
    expect(verdict(verify(OTHERS))).toBe("missing_signature");
  });

  it.each([
    ["empty", ""],
    ["not hex", "" + "!".repeat(64)],
    ["short", "" + "abcd"],
  ])("reports a malformed signature (%s)", (_, value) => {
    expect(verdict(verify(signed(value)))).toBe("malformed_signature");
  });

  it("has no timestamp: an old delivery still verifies", () => {
    expect(verdict(verify(signed(), { nowMs: NOW_MS + 86_400_000 * 365 }))).toBe("verified");
  });
});

describe("lemon_squeezy signing", () => {
  it("writes the header Lemon Squeezy's recipe gives, which verifies", () => {
    const headers = signHeaders({ provider: "lemon_squeezy", secret: Buffer.from(SECRET), body: BODY, nowMs: NOW_MS, headers: signed() });
    expect(headers).toEqual([[HEADER, signature()]]);
    expect(verdict(verify(headers))).toBe("verified");
    expect(verdict(verify(headers, { secret: Buffer.from("another-secret") }))).toBe("signature_mismatch");
  });
});

describe("lemon_squeezy detection and event type", () => {
  it("is detected from X-Event-Name with X-Signature, never from X-Signature alone", () => {
    expect(detectProvider(signed())).toBe("lemon_squeezy");
    expect(detectProvider([[HEADER, signature()]])).toBeUndefined();
    expect(detectProvider([["X-Event-Name", "order_created"]])).toBeUndefined();
  });

  it("is the X-Event-Name header, else the body's meta.event_name", () => {
    expect(canonicalEventType("lemon_squeezy", [["X-Event-Name", "subscription_updated"]], BODY)).toBe("subscription_updated");
    expect(canonicalEventType("lemon_squeezy", [], BODY)).toBe("order_created");
    expect(canonicalEventType("lemon_squeezy", [], Buffer.from('{"event_name":"x"}'))).toBe("");
  });
});
