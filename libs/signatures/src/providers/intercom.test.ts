import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalEventType, detectProvider, providers, signHeaders, type HeaderPair } from "../index.js";
import { NOW_MS, UNTIMED_PASSED, verdict, verifierFor } from "../testing/index.js";

// Intercom has no verification library on npm, and the example request on its "Signed
// notifications" page (developers.intercom.com) does not give the secret it was signed with.
// The expected header follows that page: "sha1=" + hex HMAC-SHA1 of the body, keyed with the
// app's client secret. The body is the page's example notification.
const SECRET = "intercom-client-secret";
const PAYLOAD = JSON.stringify({
  type: "notification_event",
  id: "notif_78c122d0-23ba-11e4-9464-79b01267cc2e",
  topic: "user.created",
  app_id: "a86dr8yl",
  data: { type: "notification_event_data", item: { type: "user", id: "530370b477ad7120001d", user_id: "25", name: "Hoban Washburne" } },
});
const BODY = Buffer.from(PAYLOAD);

const intercomSignature = (secret = SECRET, body: Uint8Array = BODY) => `sha1=${createHmac("sha1", secret).update(body).digest("hex")}`;
const verify = verifierFor("intercom", SECRET, BODY);
const sample = (signature: string): HeaderPair[] => [
  ["User-Agent", "intercom-parrot-service-client/1.0"],
  ["X-Hub-Signature", signature],
  ["Accept", "application/json"],
  ["Content-Type", "application/json"],
];

describe("intercom verification", () => {
  it("accepts the documented signature", () => {
    expect(verify(sample(intercomSignature()))).toEqual({ verification: "verified", checks: UNTIMED_PASSED });
    expect(verdict(verify([["x-hub-signature", intercomSignature().toUpperCase().replace("SHA1=", "sha1=")]]))).toBe("verified");
  });

  it("rejects a wrong secret and a changed body", () => {
    expect(verdict(verify(sample(intercomSignature("other"))))).toBe("signature_mismatch");
    expect(verdict(verify(sample(intercomSignature()), { body: Buffer.from(`${PAYLOAD} `) }))).toBe("signature_mismatch");
  });

  it("reports a missing header", () => {
    expect(verdict(verify([]))).toBe("missing_signature");
    expect(verdict(verify([["X-Hub-Signature-256", "sha256=00"]]))).toBe("missing_signature");
  });

  it.each([
    ["empty", ""],
    ["no prefix", "a".repeat(40)],
    ["SHA-256 as Bitbucket writes it", `sha256=${"a".repeat(64)}`],
    ["non-hex", `sha1=${"z".repeat(40)}`],
    ["short", "sha1=abcd"],
  ])("reports a malformed header (%s)", (_, value) => {
    expect(verdict(verify([["X-Hub-Signature", value]]))).toBe("malformed_signature");
  });
});

describe("intercom detection, event type and signing", () => {
  it("is never detected: its only signature header is shared with GitHub and Bitbucket", () => {
    expect(providers.intercom.detect(sample(intercomSignature()))).toBe(false);
    expect(detectProvider(sample(intercomSignature()))).toBeUndefined();
  });

  it("names the event by the body's topic", () => {
    expect(canonicalEventType("intercom", [], BODY)).toBe("user.created");
    expect(canonicalEventType("intercom", [], Buffer.from('{"type":"notification_event","topic":"ping"}'))).toBe("ping");
    expect(canonicalEventType("intercom", [], Buffer.from('{"data":{"topic":"nested"}}'))).toBe("");
  });

  it("signs as Intercom does, and verify accepts it", () => {
    const signed = signHeaders({ provider: "intercom", secret: Buffer.from(SECRET), body: BODY, nowMs: NOW_MS, headers: [] });
    expect(signed).toEqual([["X-Hub-Signature", intercomSignature()]]);
    expect(verdict(verify(signed))).toBe("verified");
  });
});
