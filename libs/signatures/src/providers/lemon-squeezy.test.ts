import { describe, expect, it } from "vitest";
import { detectProvider, canonicalEventType } from "../index.js";
import { bodyHmacSuite } from "../testing/shared-suites.js";

/**
 * Lemon Squeezy's SDK (@lemonsqueezy/lemonsqueezy.js, not installed) does not verify webhooks;
 * its documentation gives the recipe, a hex HMAC-SHA256 of the raw body in X-Signature
 * (https://docs.lemonsqueezy.com/help/webhooks/signing-requests).
 * The expected header is built here from that recipe with node:crypto, independently of the
 * scheme under test.
 */
const SECRET = "my-lemon-secret";
const PAYLOAD = "{\"meta\":{\"event_name\":\"order_created\",\"custom_data\":{\"customer_id\":25}},\"data\":{\"type\":\"orders\",\"id\":\"1\",\"attributes\":{\"store_id\":1,\"identifier\":\"636f855c-1fb9-4c07-b75c-3a10afef010a\",\"order_number\":1,\"currency\":\"USD\",\"total\":1199,\"status\":\"paid\"}}}";
const HEADER = "X-Signature";

const { signed, signature, body: BODY } = bodyHmacSuite({
  provider: "lemon_squeezy",
  name: "Lemon Squeezy",
  secret: SECRET,
  payload: PAYLOAD,
  header: HEADER,
  others: [["Content-Type", "application/json"], ["X-Event-Name", "order_created"]],
  algorithm: "sha256",
  encoding: "hex",
  malformed: [
    ["not hex", "!".repeat(64)],
    ["short", "abcd"],
  ],
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
