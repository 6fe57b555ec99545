import { describe, expect, it } from "vitest";
import { detectProvider, canonicalEventType } from "../index.js";
import { bodyHmacSuite } from "../testing/shared-suites.js";

/**
 * Vercel has no verification library on npm; its documentation gives the recipe, a hex
 * HMAC-SHA1 of the raw body in x-vercel-signature (https://vercel.com/docs/observability/webhooks).
 * The expected header is built here from that recipe with node:crypto, independently of the
 * scheme under test.
 */
const SECRET = "vercel-webhook-secret-x9Q2";
const PAYLOAD = "{\"id\":\"evt_8ZGLb5Ck8kq\",\"type\":\"deployment.succeeded\",\"createdAt\":1790000000000,\"region\":\"iad1\",\"payload\":{\"team\":{\"id\":\"team_1\"},\"user\":{\"id\":\"user_1\"},\"deployment\":{\"id\":\"dpl_2\",\"url\":\"my-app-abc123.vercel.app\",\"name\":\"my-app\"},\"target\":\"production\"}}";

const { signed, body: BODY } = bodyHmacSuite({
  provider: "vercel",
  name: "Vercel",
  secret: SECRET,
  payload: PAYLOAD,
  header: "x-vercel-signature",
  others: [["Content-Type", "application/json"]],
  algorithm: "sha1",
  encoding: "hex",
  malformed: [
    ["not hex", "!".repeat(40)],
    ["short", "abcd"],
    ["a SHA-256 digest", "a".repeat(64)],
  ],
});

describe("vercel detection and event type", () => {
  it("is detected from its signature header", () => {
    expect(detectProvider(signed())).toBe("vercel");
  });

  it("is the body's top-level type", () => {
    expect(canonicalEventType("vercel", signed(), BODY)).toBe("deployment.succeeded");
    expect(canonicalEventType("vercel", [], Buffer.from('{"payload":{"type":"x"}}'))).toBe("");
  });
});
