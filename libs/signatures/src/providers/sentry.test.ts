import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalEventType, detectProvider, signHeaders, type HeaderPair } from "../index.js";
import { NOW_MS, UNTIMED_PASSED, verdict, verifierFor } from "../test-support.js";

/**
 * Sentry has no verification library on npm (@sentry/node sends errors, it does not receive
 * webhooks); its documentation gives the recipe, a hex HMAC-SHA256 of the body keyed by the
 * integration's Client Secret (https://docs.sentry.io/integrations/integration-platform/webhooks/).
 * The expected header is built here from that recipe with node:crypto, independently of the
 * scheme under test.
 */
const SECRET = "9a8b7c6d5e4f30211234567890abcdef9a8b7c6d5e4f30211234567890abcdef";
const PAYLOAD = "{\"action\":\"created\",\"installation\":{\"uuid\":\"a8e5d37a-696c-4c54-adb5-b3f28d64c7de\"},\"data\":{\"issue\":{\"id\":\"1170820242\",\"shortId\":\"FRONT-1\",\"title\":\"ReferenceError: blooopy is not defined\",\"status\":\"unresolved\"}},\"actor\":{\"type\":\"application\",\"id\":\"sentry\",\"name\":\"Sentry\"}}";
const BODY = Buffer.from(PAYLOAD, "utf8");
const HEADER = "Sentry-Hook-Signature";
/** What Sentry sends besides the signature. */
const OTHERS: HeaderPair[] = [["Content-Type", "application/json"], ["Request-ID", "a8e5d37a-696c-4c54-adb5-b3f28d64c7de"], ["Sentry-Hook-Resource", "issue"], ["Sentry-Hook-Timestamp", "1790000000"]];

function signature(secret = SECRET, body: Uint8Array = BODY): string {
  return `${createHmac("sha256", secret).update(body).digest("hex")}`;
}

const verify = verifierFor("sentry", SECRET, BODY);
const signed = (value = signature()): HeaderPair[] => [...OTHERS, [HEADER, value]];

describe("sentry verification", () => {
  it("accepts a signature made by Sentry's documented recipe", () => {
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

describe("sentry signing", () => {
  it("writes the header Sentry's recipe gives, which verifies", () => {
    const headers = signHeaders({ provider: "sentry", secret: Buffer.from(SECRET), body: BODY, nowMs: NOW_MS, headers: signed() });
    expect(headers).toEqual([[HEADER, signature()]]);
    expect(verdict(verify(headers))).toBe("verified");
    expect(verdict(verify(headers, { secret: Buffer.from("another-secret") }))).toBe("signature_mismatch");
  });
});

describe("sentry detection and event type", () => {
  it("is detected from its own headers", () => {
    expect(detectProvider(signed())).toBe("sentry");
    expect(detectProvider([["Sentry-Hook-Resource", "installation"]])).toBe("sentry");
  });

  it("is the resource header plus the body's action", () => {
    expect(canonicalEventType("sentry", signed(), BODY)).toBe("issue.created");
    expect(canonicalEventType("sentry", [["Sentry-Hook-Resource", "event_alert"]], Buffer.from('{"data":{}}'))).toBe("event_alert");
    expect(canonicalEventType("sentry", [], BODY)).toBe("");
  });
});
