import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { detectProvider, canonicalEventType } from "../index.js";
import { bodyHmacSuite } from "../testing/shared-suites.js";

/**
 * WooCommerce's JavaScript client (@woocommerce/woocommerce-rest-api, not installed) does not
 * verify webhooks; WooCommerce signs in PHP, base64 of the binary HMAC-SHA256 of the payload
 * (WC_Webhook::generate_signature; https://woocommerce.github.io/woocommerce-rest-api-docs/#webhooks).
 * The expected header is built here from that recipe with node:crypto, independently of the
 * scheme under test.
 */
const SECRET = "G<4yH*?f&l[2Yq%Rw(3s~e@oZ";
const PAYLOAD = "{\"id\":727,\"parent_id\":0,\"status\":\"processing\",\"currency\":\"USD\",\"date_created\":\"2026-09-21T13:33:20\",\"total\":\"29.35\",\"billing\":{\"first_name\":\"John\",\"last_name\":\"Doe\",\"email\":\"john.doe@example.com\"},\"line_items\":[{\"id\":315,\"name\":\"Woo Single #1\",\"product_id\":93,\"quantity\":2,\"total\":\"6.00\"}]}";

const { signed, body: BODY } = bodyHmacSuite({
  provider: "woocommerce",
  name: "WooCommerce",
  secret: SECRET,
  payload: PAYLOAD,
  header: "X-WC-Webhook-Signature",
  others: [["Content-Type", "application/json"], ["X-WC-Webhook-Source", "https://shop.example.com/"], ["X-WC-Webhook-Topic", "order.created"], ["X-WC-Webhook-Resource", "order"], ["X-WC-Webhook-Event", "created"], ["X-WC-Webhook-ID", "12"], ["X-WC-Webhook-Delivery-ID", "4f0d2b1c9a"]],
  algorithm: "sha256",
  encoding: "base64",
  malformed: [
    ["not base64", "!".repeat(44)],
    ["short", "abcd"],
    ["hex instead of base64", createHmac("sha256", SECRET).update(PAYLOAD).digest("hex")],
  ],
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
