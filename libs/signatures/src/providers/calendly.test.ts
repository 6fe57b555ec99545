import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalEventType, detectProvider, signHeaders, type HeaderPair } from "../index.js";
import { NOW_MS, NOW_S, TIMED_PASSED, verdict, verifierFor } from "../testing/index.js";

// Calendly has no verification library on npm and publishes no example digest; the expected
// header follows developer.calendly.com's "Webhook signatures": t=<unix s>,v1=<hex HMAC-SHA256
// of "<t>.<body>" keyed with the subscription's signing key>, and signatures older than three
// minutes rejected.
const SECRET = "calendly-signing-key";
const PAYLOAD = '{"created_at":"2026-09-21T13:33:20.000000Z","event":"invitee.created","payload":{"email":"zoe@example.com","name":"Zoë"}}';
const BODY = Buffer.from(PAYLOAD, "utf8");

const calendlyHeader = (t: number = NOW_S, secret = SECRET, body: Uint8Array = BODY) =>
  `t=${t},v1=${createHmac("sha256", secret).update(`${t}.`).update(body).digest("hex")}`;
const verify = verifierFor("calendly", SECRET, BODY);
const sample = (value: string): HeaderPair[] => [["Content-Type", "application/json; charset=utf-8"], ["Calendly-Webhook-Signature", value]];

describe("calendly verification", () => {
  it("accepts the documented signature", () => {
    expect(verify(sample(calendlyHeader()))).toEqual({ verification: "verified", checks: TIMED_PASSED });
    expect(verdict(verify([["calendly-webhook-signature", calendlyHeader()]]))).toBe("verified");
  });

  it("rejects a wrong secret and a changed body", () => {
    expect(verdict(verify(sample(calendlyHeader(NOW_S, "other"))))).toBe("signature_mismatch");
    expect(verdict(verify(sample(calendlyHeader()), { body: Buffer.from(`${PAYLOAD} `) }))).toBe("signature_mismatch");
  });

  it("reports a missing header", () => {
    expect(verdict(verify([]))).toBe("missing_signature");
  });

  it.each([
    ["empty", ""],
    ["no timestamp", `v1=${"a".repeat(64)}`],
    ["no v1", `t=${NOW_S}`],
    ["non-numeric timestamp", `t=now,v1=${"a".repeat(64)}`],
    ["short v1", `t=${NOW_S},v1=abcd`],
  ])("reports a malformed header (%s)", (_, value) => {
    expect(verdict(verify(sample(value)))).toBe("malformed_signature");
  });

  it("rejects signatures more than three minutes away and accepts the edge", () => {
    expect(verdict(verify(sample(calendlyHeader(NOW_S - 181))))).toBe("timestamp_out_of_tolerance");
    expect(verdict(verify(sample(calendlyHeader(NOW_S + 181))))).toBe("timestamp_out_of_tolerance");
    expect(verdict(verify(sample(calendlyHeader(NOW_S - 180))))).toBe("verified");
    expect(verdict(verify(sample(calendlyHeader(NOW_S - 3600, "other"))))).toBe("signature_mismatch");
  });
});

describe("calendly detection, event type and signing", () => {
  it("is detected by Calendly-Webhook-Signature", () => {
    expect(detectProvider(sample(calendlyHeader()))).toBe("calendly");
  });

  it("names the event by the body's event", () => {
    expect(canonicalEventType("calendly", [], BODY)).toBe("invitee.created");
    expect(canonicalEventType("calendly", [], Buffer.from('{"payload":{"event":"x"}}'))).toBe("");
  });

  it("signs at the fresh time as Calendly does, and verify accepts it", () => {
    const signed = signHeaders({ provider: "calendly", secret: Buffer.from(SECRET), body: BODY, nowMs: NOW_MS + 999, headers: [] });
    expect(signed).toEqual([["Calendly-Webhook-Signature", calendlyHeader(NOW_S)]]);
    expect(verdict(verify(signed))).toBe("verified");
  });
});
