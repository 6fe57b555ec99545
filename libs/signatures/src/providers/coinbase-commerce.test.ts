import { describe, expect, it } from "vitest";
import { detectProvider, canonicalEventType } from "../index.js";
import { bodyHmacSuite } from "../testing/shared-suites.js";

/**
 * Coinbase Commerce's Node library (coinbase-commerce-node, not installed) verifies with a hex
 * HMAC-SHA256 of the raw body keyed by the shared secret, as its documentation states
 * (https://docs.cdp.coinbase.com/commerce/api-arcitecture/webhooks-security).
 * The expected header is built here from that recipe with node:crypto, independently of the
 * scheme under test.
 */
const SECRET = "5f1b2a9c-0c7a-4e4e-9a3b-1d2c3b4a5f6e";
const PAYLOAD = "{\"attempt_number\":1,\"event\":{\"api_version\":\"2018-03-22\",\"created_at\":\"2026-09-21T13:33:20Z\",\"data\":{\"code\":\"66BEOV2A\",\"name\":\"The Sovereign Individual\",\"pricing_type\":\"fixed_price\"},\"id\":\"24934862-d980-46cb-9402-43c81b0cdba6\",\"resource\":\"event\",\"type\":\"charge:confirmed\"},\"id\":\"f6a8f1d2-53c9-4e3b-a3d6-7d7c2d1e0b5f\",\"scheduled_for\":\"2026-09-21T13:33:20Z\"}";

const { signed, body: BODY } = bodyHmacSuite({
  provider: "coinbase_commerce",
  name: "Coinbase Commerce",
  secret: SECRET,
  payload: PAYLOAD,
  header: "X-CC-Webhook-Signature",
  others: [["Content-Type", "application/json"]],
  algorithm: "sha256",
  encoding: "hex",
  malformed: [
    ["not hex", "!".repeat(64)],
    ["short", "abcd"],
  ],
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
