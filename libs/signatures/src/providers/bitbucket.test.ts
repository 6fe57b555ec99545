import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalEventType, detectProvider, signHeaders, type HeaderPair } from "../index.js";
import { NOW_MS, UNTIMED_PASSED, verdict, verifierFor } from "../testing/index.js";

// Bitbucket publishes no verification library on npm and no example digest; the expected
// signature is computed as support.atlassian.com/bitbucket-cloud/docs/manage-webhooks describes
// it: "sha256=" + hex HMAC-SHA256 of the raw body, keyed with the webhook's secret.
const SECRET = "bb-webhook-secret";
const PAYLOAD = '{"push":{"changes":[]},"repository":{"full_name":"team/repo"},"actor":{"display_name":"Zoë"}}';
const BODY = Buffer.from(PAYLOAD, "utf8");

const bitbucketSignature = (secret = SECRET, body: Uint8Array = BODY) => `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
const verify = verifierFor("bitbucket", SECRET, BODY);

/** The headers Bitbucket Cloud sends with a push. */
const sample = (signature: string): HeaderPair[] => [
  ["X-Event-Key", "repo:push"],
  ["X-Hook-UUID", "5f5b2ef6-86d3-4e4a-9a4b-3c9cd3b8f6de"],
  ["X-Request-UUID", "1c0dbb7c-0d2b-4c39-9b1e-4b0e0b5f8a11"],
  ["X-Attempt-Number", "1"],
  ["X-Hub-Signature", signature],
];

describe("bitbucket verification", () => {
  it("accepts the documented signature", () => {
    expect(verify(sample(bitbucketSignature()))).toEqual({ verification: "verified", checks: UNTIMED_PASSED });
    expect(verdict(verify([["x-hub-signature", bitbucketSignature().toUpperCase().replace("SHA256=", "sha256=")]]))).toBe("verified");
  });

  it("rejects a wrong secret and a changed body", () => {
    expect(verdict(verify(sample(bitbucketSignature("other"))))).toBe("signature_mismatch");
    expect(verdict(verify(sample(bitbucketSignature()), { body: Buffer.from(`${PAYLOAD}\n`) }))).toBe("signature_mismatch");
  });

  it("reports a missing header", () => {
    expect(verdict(verify([]))).toBe("missing_signature");
    expect(verdict(verify([["X-Event-Key", "repo:push"]]))).toBe("missing_signature");
  });

  it.each([
    ["empty", ""],
    ["no prefix", "a".repeat(64)],
    ["SHA-1 as GitHub writes it", `sha1=${"a".repeat(40)}`],
    ["non-hex", `sha256=${"z".repeat(64)}`],
    ["short", "sha256=abcd"],
  ])("reports a malformed header (%s)", (_, value) => {
    expect(verdict(verify([["X-Hub-Signature", value]]))).toBe("malformed_signature");
  });
});

describe("bitbucket detection, event type and signing", () => {
  it("is detected by X-Event-Key or X-Hook-UUID, never by X-Hub-Signature alone", () => {
    expect(detectProvider(sample(bitbucketSignature()))).toBe("bitbucket");
    expect(detectProvider([["X-Hub-Signature", bitbucketSignature()]])).toBeUndefined();
  });

  it("names the event by X-Event-Key", () => {
    expect(canonicalEventType("bitbucket", sample(""), BODY)).toBe("repo:push");
    expect(canonicalEventType("bitbucket", [["X-Event-Key", "pullrequest:created"]], BODY)).toBe("pullrequest:created");
    expect(canonicalEventType("bitbucket", [], BODY)).toBe("");
  });

  it("signs as Bitbucket does, and verify accepts it", () => {
    const signed = signHeaders({ provider: "bitbucket", secret: Buffer.from(SECRET), body: BODY, nowMs: NOW_MS, headers: [] });
    expect(signed).toEqual([["X-Hub-Signature", bitbucketSignature()]]);
    expect(verdict(verify(signed))).toBe("verified");
  });
});
