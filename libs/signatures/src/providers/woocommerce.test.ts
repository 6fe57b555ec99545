import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalEventType, detectProvider, signHeaders, type HeaderPair } from "../index.js";
import { NOW_MS, UNTIMED_PASSED, verdict, verifierFor } from "../test-support.js";

/**
 * WooCommerce's JavaScript client (@woocommerce/woocommerce-rest-api, not installed) does not
 * verify webhooks; WooCommerce signs in PHP, base64 of the binary HMAC-SHA256 of the payload
 * (WC_Webhook::generate_signature; https://woocommerce.github.io/woocommerce-rest-api-docs/#webhooks).
 * The expected header is built here from that recipe with node:crypto, independently of the
 * scheme under test.
 */
const SECRET = "G<4yH*?f&l[2Yq%Rw(3s~e@oZ";
const PAYLOAD = "{\"id\":727,\"parent_id\":0,\"status\":\"processing\",\"currency\":\"USD\",\"date_created\":\"2026-09-21T13:33:20\",\"total\":\"29.35\",\"billing\":{\"first_name\":\"John\",\"last_name\":\"Doe\",\"email\":\"john.doe@example.com\"},\"line_items\":[{\"id\":315,\"name\":\"Woo Single #1\",\"product_id\":93,\"quantity\":2,\"total\":\"6.00\"}]}";
const BODY = Buffer.from(PAYLOAD, "utf8");
const HEADER = "X-WC-Webhook-Signature";
/** What WooCommerce sends besides the signature. */
const OTHERS: HeaderPair[] = [["Content-Type", "application/json"], ["X-WC-Webhook-Source", "https://shop.example.com/"], ["X-WC-Webhook-Topic", "order.created"], ["X-WC-Webhook-Resource", "order"], ["X-WC-Webhook-Event", "created"], ["X-WC-Webhook-ID", "12"], ["X-WC-Webhook-Delivery-ID", "4f0d2b1c9a"]];

function signature(secret = SECRET, body: Uint8Array = BODY): string {
  return `${createHmac("sha256", secret).update(body).digest("base64")}`;
}

const verify = verifierFor("woocommerce", SECRET, BODY);
const signed = (value = signature()): HeaderPair[] => [...OTHERS, [HEADER, value]];

describe("woocommerce verification", () => {
  it("accepts a signature made by WooCommerce's documented recipe", () => {
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
    ["not base64", "" + "!".repeat(44)],
    ["short", "" + "abcd"],
    ["hex instead of base64", createHmac("sha256", SECRET).update(BODY).digest("hex")],
  ])("reports a malformed signature (%s)", (_, value) => {
    expect(verdict(verify(signed(value)))).toBe("malformed_signature");
  });

  it("has no timestamp: an old delivery still verifies", () => {
    expect(verdict(verify(signed(), { nowMs: NOW_MS + 86_400_000 * 365 }))).toBe("verified");
  });
});

describe("woocommerce signing", () => {
  it("writes the header WooCommerce's recipe gives, which verifies", () => {
    const headers = signHeaders({ provider: "woocommerce", secret: Buffer.from(SECRET), body: BODY, nowMs: NOW_MS, headers: signed() });
    expect(headers).toEqual([[HEADER, signature()]]);
    expect(verdict(verify(headers))).toBe("verified");
    expect(verdict(verify(headers, { secret: Buffer.from("another-secret") }))).toBe("signature_mismatch");
  });
});

describe("woocommerce detection and event type", () => {
  it("is detected from its own headers", () => {
    expect(detectProvider(signed())).toBe("woocommerce");
    expect(detectProvider([["X-WC-Webhook-Topic", "order.created"]])).toBe("woocommerce");
  });

  it("is the topic header", () => {
    expect(canonicalEventType("woocommerce", signed(), BODY)).toBe("order.created");
    expect(canonicalEventType("woocommerce", [], BODY)).toBe("");
  });
});
