import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalEventType, detectProvider, signHeaders, type HeaderPair } from "../index.js";
import { NOW_MS, UNTIMED_PASSED, verdict, verifierFor } from "../test-support.js";

/**
 * Coinbase Commerce's Node library (coinbase-commerce-node, not installed) verifies with a hex
 * HMAC-SHA256 of the raw body keyed by the shared secret, as its documentation states
 * (https://docs.cdp.coinbase.com/commerce/api-arcitecture/webhooks-security).
 * The expected header is built here from that recipe with node:crypto, independently of the
 * scheme under test.
 */
const SECRET = "5f1b2a9c-0c7a-4e4e-9a3b-1d2c3b4a5f6e";
const PAYLOAD = "{\"attempt_number\":1,\"event\":{\"api_version\":\"2018-03-22\",\"created_at\":\"2026-09-21T13:33:20Z\",\"data\":{\"code\":\"66BEOV2A\",\"name\":\"The Sovereign Individual\",\"pricing_type\":\"fixed_price\"},\"id\":\"24934862-d980-46cb-9402-43c81b0cdba6\",\"resource\":\"event\",\"type\":\"charge:confirmed\"},\"id\":\"f6a8f1d2-53c9-4e3b-a3d6-7d7c2d1e0b5f\",\"scheduled_for\":\"2026-09-21T13:33:20Z\"}";
const BODY = Buffer.from(PAYLOAD, "utf8");
const HEADER = "X-CC-Webhook-Signature";
/** What Coinbase Commerce sends besides the signature. */
const OTHERS: HeaderPair[] = [["Content-Type", "application/json"]];

function signature(secret = SECRET, body: Uint8Array = BODY): string {
  return `${createHmac("sha256", secret).update(body).digest("hex")}`;
}

const verify = verifierFor("coinbase_commerce", SECRET, BODY);
const signed = (value = signature()): HeaderPair[] => [...OTHERS, [HEADER, value]];

describe("coinbase_commerce verification", () => {
  it("accepts a signature made by Coinbase Commerce's documented recipe", () => {
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

describe("coinbase_commerce signing", () => {
  it("writes the header Coinbase Commerce's recipe gives, which verifies", () => {
    const headers = signHeaders({ provider: "coinbase_commerce", secret: Buffer.from(SECRET), body: BODY, nowMs: NOW_MS, headers: signed() });
    expect(headers).toEqual([[HEADER, signature()]]);
    expect(verdict(verify(headers))).toBe("verified");
    expect(verdict(verify(headers, { secret: Buffer.from("another-secret") }))).toBe("signature_mismatch");
  });
});

describe("coinbase_commerce detection and event type", () => {
  it("is detected from its signature header", () => {
    expect(detectProvider(signed())).toBe("coinbase_commerce");
  });

  it("is the body's event.type", () => {
    expect(canonicalEventType("coinbase_commerce", signed(), BODY)).toBe("charge:confirmed");
    expect(canonicalEventType("coinbase_commerce", [], Buffer.from('{"type":"charge:created"}'))).toBe("");
  });
});
