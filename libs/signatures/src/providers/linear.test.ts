import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalEventType, detectProvider, signHeaders, type HeaderPair } from "../index.js";
import { NOW_MS, TIMED_PASSED, UNTIMED_PASSED, verdict, verifierFor } from "../testing/index.js";

// @linear/sdk is not installed, and Linear publishes no example digest. The expected signature
// follows linear.app/developers/webhooks ("Securing webhooks") and LinearWebhookClient.verify in
// @linear/sdk: hex HMAC-SHA256 of the raw body, no prefix; webhookTimestamp (ms, in the body)
// at most a minute from now.
const SECRET = "lin_wh_test_secret";
const body = (timestampMs: number | string = NOW_MS) =>
  Buffer.from(
    `{"action":"create","actor":{"id":"u1","name":"Zoë"},"createdAt":"2026-09-21T13:33:20.000Z","data":{"id":"i1","title":"Bug"},"type":"Issue","organizationId":"o1","webhookTimestamp":${typeof timestampMs === "number" ? timestampMs : JSON.stringify(timestampMs)},"webhookId":"w1"}`,
  );
const BODY = body();

const linearSignature = (payload: Uint8Array = BODY, secret = SECRET) => createHmac("sha256", secret).update(payload).digest("hex");
const verify = verifierFor("linear", SECRET, BODY);

/** The headers Linear sends with an Issue webhook. */
const sample = (signature: string): HeaderPair[] => [
  ["Content-Type", "application/json; charset=utf-8"],
  ["Linear-Delivery", "234d1a4e-b617-4388-90fe-adc3633d6b72"],
  ["Linear-Event", "Issue"],
  ["Linear-Signature", signature],
  ["User-Agent", "Linear-Webhook"],
];

describe("linear verification", () => {
  it("accepts the documented signature and checks the body's timestamp", () => {
    expect(verify(sample(linearSignature()))).toEqual({ verification: "verified", checks: TIMED_PASSED });
    expect(verdict(verify([["linear-signature", linearSignature().toUpperCase()]]))).toBe("verified");
  });

  it("rejects a wrong secret and a changed body", () => {
    expect(verdict(verify(sample(linearSignature(BODY, "other"))))).toBe("signature_mismatch");
    expect(verdict(verify(sample(linearSignature()), { body: body(NOW_MS + 1) }))).toBe("signature_mismatch");
  });

  it("reports a missing header", () => {
    expect(verdict(verify([]))).toBe("missing_signature");
    expect(verdict(verify([["Linear-Event", "Issue"]]))).toBe("missing_signature");
  });

  it.each([
    ["empty", ""],
    ["prefixed", `sha256=${linearSignature()}`],
    ["base64", createHmac("sha256", SECRET).update(BODY).digest("base64")],
    ["short", "abcd"],
  ])("reports a malformed header (%s)", (_, value) => {
    expect(verdict(verify([["Linear-Signature", value]]))).toBe("malformed_signature");
  });

  it("rejects a webhookTimestamp more than a minute away, either side", () => {
    for (const skewMs of [-61_000, 61_000, -3_600_000]) {
      const stale = body(NOW_MS + skewMs);
      expect(verdict(verify(sample(linearSignature(stale)), { body: stale }))).toBe("timestamp_out_of_tolerance");
    }
    for (const skewMs of [-60_000, 60_000, -59_999]) {
      const fresh = body(NOW_MS + skewMs);
      expect(verdict(verify(sample(linearSignature(fresh)), { body: fresh }))).toBe("verified");
    }
  });

  it("judges the signature before the timestamp", () => {
    const stale = body(NOW_MS - 3_600_000);
    expect(verdict(verify(sample(linearSignature(stale, "other")), { body: stale }))).toBe("signature_mismatch");
  });

  it("judges the signature alone when the body has no numeric webhookTimestamp, as Linear's SDK does", () => {
    for (const payload of [Buffer.from('{"type":"Issue","action":"create"}'), body("1790000000000"), Buffer.from("not json")]) {
      expect(verify(sample(linearSignature(payload)), { body: payload })).toEqual({ verification: "verified", checks: UNTIMED_PASSED });
    }
  });
});

describe("linear detection, event type and signing", () => {
  it("is detected by its own headers", () => {
    expect(detectProvider(sample(linearSignature()))).toBe("linear");
    expect(detectProvider([["Linear-Delivery", "x"]])).toBe("linear");
  });

  it("names the event by its entity type and action", () => {
    expect(canonicalEventType("linear", sample(""), BODY)).toBe("Issue.create");
    expect(canonicalEventType("linear", [], Buffer.from('{"type":"Comment","action":"remove"}'))).toBe("Comment.remove");
    expect(canonicalEventType("linear", [["Linear-Event", "Project"]], Buffer.from("{}"))).toBe("Project");
    expect(canonicalEventType("linear", [], Buffer.from("[]"))).toBe("");
  });

  it("signs the body as Linear does, and verify accepts it", () => {
    const signed = signHeaders({ provider: "linear", secret: Buffer.from(SECRET), body: BODY, nowMs: NOW_MS, headers: [] });
    expect(signed).toEqual([["Linear-Signature", linearSignature()]]);
    expect(verdict(verify(signed))).toBe("verified");
  });
});
