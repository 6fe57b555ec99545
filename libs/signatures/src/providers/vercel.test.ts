import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalEventType, detectProvider, signHeaders, type HeaderPair } from "../index.js";
import { NOW_MS, UNTIMED_PASSED, verdict, verifierFor } from "../test-support.js";

/**
 * Vercel has no verification library on npm; its documentation gives the recipe, a hex
 * HMAC-SHA1 of the raw body in x-vercel-signature (https://vercel.com/docs/observability/webhooks).
 * The expected header is built here from that recipe with node:crypto, independently of the
 * scheme under test.
 */
const SECRET = "vercel-webhook-secret-x9Q2";
const PAYLOAD = "{\"id\":\"evt_8ZGLb5Ck8kq\",\"type\":\"deployment.succeeded\",\"createdAt\":1790000000000,\"region\":\"iad1\",\"payload\":{\"team\":{\"id\":\"team_1\"},\"user\":{\"id\":\"user_1\"},\"deployment\":{\"id\":\"dpl_2\",\"url\":\"my-app-abc123.vercel.app\",\"name\":\"my-app\"},\"target\":\"production\"}}";
const BODY = Buffer.from(PAYLOAD, "utf8");
const HEADER = "x-vercel-signature";
/** What Vercel sends besides the signature. */
const OTHERS: HeaderPair[] = [["Content-Type", "application/json"]];

function signature(secret = SECRET, body: Uint8Array = BODY): string {
  return `${createHmac("sha1", secret).update(body).digest("hex")}`;
}

const verify = verifierFor("vercel", SECRET, BODY);
const signed = (value = signature()): HeaderPair[] => [...OTHERS, [HEADER, value]];

describe("vercel verification", () => {
  it("accepts a signature made by Vercel's documented recipe", () => {
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
    ["not hex", "" + "!".repeat(40)],
    ["short", "" + "abcd"],
    ["a SHA-256 digest", "a".repeat(64)],
  ])("reports a malformed signature (%s)", (_, value) => {
    expect(verdict(verify(signed(value)))).toBe("malformed_signature");
  });

  it("has no timestamp: an old delivery still verifies", () => {
    expect(verdict(verify(signed(), { nowMs: NOW_MS + 86_400_000 * 365 }))).toBe("verified");
  });
});

describe("vercel signing", () => {
  it("writes the header Vercel's recipe gives, which verifies", () => {
    const headers = signHeaders({ provider: "vercel", secret: Buffer.from(SECRET), body: BODY, nowMs: NOW_MS, headers: signed() });
    expect(headers).toEqual([[HEADER, signature()]]);
    expect(verdict(verify(headers))).toBe("verified");
    expect(verdict(verify(headers, { secret: Buffer.from("another-secret") }))).toBe("signature_mismatch");
  });
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
