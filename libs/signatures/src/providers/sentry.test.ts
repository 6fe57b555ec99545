import { describe, expect, it } from "vitest";
import { detectProvider, canonicalEventType } from "../index.js";
import { bodyHmacSuite } from "../testing/shared-suites.js";

/**
 * Sentry has no verification library on npm (@sentry/node sends errors, it does not receive
 * webhooks); its documentation gives the recipe, a hex HMAC-SHA256 of the body keyed by the
 * integration's Client Secret (https://docs.sentry.io/integrations/integration-platform/webhooks/).
 * The expected header is built here from that recipe with node:crypto, independently of the
 * scheme under test.
 */
const SECRET = "9a8b7c6d5e4f30211234567890abcdef9a8b7c6d5e4f30211234567890abcdef";
const PAYLOAD = "{\"action\":\"created\",\"installation\":{\"uuid\":\"a8e5d37a-696c-4c54-adb5-b3f28d64c7de\"},\"data\":{\"issue\":{\"id\":\"1170820242\",\"shortId\":\"FRONT-1\",\"title\":\"ReferenceError: blooopy is not defined\",\"status\":\"unresolved\"}},\"actor\":{\"type\":\"application\",\"id\":\"sentry\",\"name\":\"Sentry\"}}";

const { signed, body: BODY } = bodyHmacSuite({
  provider: "sentry",
  name: "Sentry",
  secret: SECRET,
  payload: PAYLOAD,
  header: "Sentry-Hook-Signature",
  others: [["Content-Type", "application/json"], ["Request-ID", "a8e5d37a-696c-4c54-adb5-b3f28d64c7de"], ["Sentry-Hook-Resource", "issue"], ["Sentry-Hook-Timestamp", "1790000000"]],
  algorithm: "sha256",
  encoding: "hex",
  malformed: [
    ["not hex", "!".repeat(64)],
    ["short", "abcd"],
  ],
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
