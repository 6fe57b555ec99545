import { createHmac } from "node:crypto";
import Stripe from "stripe";
import { describe, expect, it } from "vitest";
import { canonicalEventType, signHeaders, type HeaderPair } from "../index.js";
import { NOW_MS, TIMED_PASSED, verdict, verifierFor, NOW_S } from "../testing/index.js";

const SECRET = "whsec_stripe_test_secret";
const PAYLOAD = '{"id":"evt_1","object":"event","type":"invoice.paid","data":{"object":{}}}';
const BODY = Buffer.from(PAYLOAD, "utf8");
const stripe = new Stripe("sk_test_x");

/** A Stripe-Signature header made by Stripe's own library. */
function stripeHeader(timestamp = NOW_S, secret = SECRET, payload = PAYLOAD): string {
  return stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp });
}

const verify = verifierFor("stripe", SECRET, BODY);

const v1Of = (value: string) => value.split(",").find((part) => part.startsWith("v1="))!;

describe("stripe verification", () => {
  it("accepts a signature made by Stripe's library", () => {
    expect(verify([["Stripe-Signature", stripeHeader()]])).toEqual({ verification: "verified", checks: TIMED_PASSED });
    // The static helper is the same implementation; both are what integrators use.
    const staticHeader = Stripe.webhooks.generateTestHeaderString({ payload: PAYLOAD, secret: SECRET, timestamp: NOW_S });
    expect(verdict(verify([["Stripe-Signature", staticHeader]]))).toBe("verified");
  });

  it.each(["stripe-signature", "STRIPE-SIGNATURE", "sTrIpE-sIgNaTuRe"])("matches the header name %s case-insensitively", (name) => {
    expect(verdict(verify([["Content-Type", "application/json"], [name, stripeHeader()]]))).toBe("verified");
  });

  it("rejects a wrong secret and a changed body", () => {
    expect(verdict(verify([["Stripe-Signature", stripeHeader(NOW_S, "whsec_other")]]))).toBe("signature_mismatch");
    expect(verdict(verify([["Stripe-Signature", stripeHeader()]], { secret: Buffer.from("whsec_other") }))).toBe("signature_mismatch");
    expect(verdict(verify([["Stripe-Signature", stripeHeader()]], { body: Buffer.from(PAYLOAD + " ") }))).toBe("signature_mismatch");
  });

  it("reports a missing header", () => {
    expect(verdict(verify([]))).toBe("missing_signature");
    expect(verdict(verify([["X-Hub-Signature-256", "sha256=00"]]))).toBe("missing_signature");
  });

  it.each([
    ["empty", ""],
    ["garbage", "not a signature"],
    ["no timestamp", `v1=${"a".repeat(64)}`],
    ["no v1", `t=${NOW_S}`],
    ["only v0", `t=${NOW_S},v0=${"a".repeat(64)}`],
    ["non-numeric timestamp", `t=soon,v1=${"a".repeat(64)}`],
    ["non-hex v1", `t=${NOW_S},v1=${"z".repeat(64)}`],
    ["short v1", `t=${NOW_S},v1=abcd`],
  ])("reports a malformed header (%s)", (_, value) => {
    expect(verdict(verify([["Stripe-Signature", value]]))).toBe("malformed_signature");
  });

  it("rejects timestamps 6 minutes old or 6 minutes ahead, and accepts the 5-minute edge", () => {
    expect(verdict(verify([["Stripe-Signature", stripeHeader(NOW_S - 360)]]))).toBe("timestamp_out_of_tolerance");
    expect(verdict(verify([["Stripe-Signature", stripeHeader(NOW_S + 360)]]))).toBe("timestamp_out_of_tolerance");
    expect(verdict(verify([["Stripe-Signature", stripeHeader(NOW_S - 300)]]))).toBe("verified");
    expect(verdict(verify([["Stripe-Signature", stripeHeader(NOW_S + 300)]]))).toBe("verified");
    expect(verdict(verify([["Stripe-Signature", stripeHeader(NOW_S - 301)]]))).toBe("timestamp_out_of_tolerance");
  });

  it("honours a custom tolerance", () => {
    expect(verdict(verify([["Stripe-Signature", stripeHeader(NOW_S - 120)]], { toleranceS: 60 }))).toBe("timestamp_out_of_tolerance");
    expect(verdict(verify([["Stripe-Signature", stripeHeader(NOW_S - 3600)]], { toleranceS: 7200 }))).toBe("verified");
  });

  it("judges the signature before the timestamp", () => {
    expect(verdict(verify([["Stripe-Signature", stripeHeader(NOW_S - 3600, "whsec_other")]]))).toBe("signature_mismatch");
  });

  it("records both the signature and the timestamp check, whichever decided the verdict", () => {
    const checksOf = (value: string) => verify([["Stripe-Signature", value]]).checks.map(({ name, ok }) => `${name}:${ok}`);
    const head = ["header_present:true", "header_well_formed:true"];
    expect(checksOf(stripeHeader(NOW_S - 3600))).toEqual([...head, "signature_matches:true", "timestamp_fresh:false"]);
    expect(checksOf(stripeHeader(NOW_S - 3600, "whsec_other"))).toEqual([...head, "signature_matches:false", "timestamp_fresh:false"]);
    expect(checksOf(stripeHeader(NOW_S, "whsec_other"))).toEqual([...head, "signature_matches:false", "timestamp_fresh:true"]);
    expect(checksOf("t=1")).toEqual(["header_present:true", "header_well_formed:false"]);
  });

  it("accepts any of several v1 signatures, and ignores v0", () => {
    const good = v1Of(stripeHeader());
    const rolledOut = v1Of(stripeHeader(NOW_S, "whsec_previous_secret"));
    const v0 = `v0=${"0".repeat(64)}`;
    expect(verdict(verify([["Stripe-Signature", `t=${NOW_S},${rolledOut},${good},${v0}`]]))).toBe("verified");
    expect(verdict(verify([["Stripe-Signature", `t=${NOW_S},${good},${rolledOut}`]]))).toBe("verified");
    expect(verdict(verify([["Stripe-Signature", `t=${NOW_S},${rolledOut},${v0}`]]))).toBe("signature_mismatch");
  });

  it("uses the first t when the header repeats it", () => {
    const good = v1Of(stripeHeader());
    expect(verdict(verify([["Stripe-Signature", `t=${NOW_S},t=${NOW_S - 1000},${good}`]]))).toBe("verified");
    expect(verdict(verify([["Stripe-Signature", `t=${NOW_S - 1000},t=${NOW_S},${good}`]]))).toBe("signature_mismatch");
  });

  it("uses the first Stripe-Signature when the header repeats", () => {
    const good = stripeHeader();
    const bad = stripeHeader(NOW_S, "whsec_other");
    expect(verdict(verify([["Stripe-Signature", good], ["stripe-signature", bad]]))).toBe("verified");
    expect(verdict(verify([["Stripe-Signature", bad], ["stripe-signature", good]]))).toBe("signature_mismatch");
  });

  it("verifies a binary body (NUL bytes, invalid UTF-8) byte for byte", () => {
    const body = Buffer.from([0x00, 0xff, 0xfe, 0xc3, 0x28, 0x00, 0x7b, 0x0d, 0x0a, 0x80]);
    const digest = createHmac("sha256", SECRET).update(`${NOW_S}.`).update(body).digest("hex");
    const headers: HeaderPair[] = [["Stripe-Signature", `t=${NOW_S},v1=${digest}`]];
    expect(verdict(verify(headers, { body }))).toBe("verified");
    const altered = Buffer.from(body);
    altered[1] = 0xfd;
    expect(verdict(verify(headers, { body: altered }))).toBe("signature_mismatch");
  });
});

describe("stripe signing", () => {
  it("writes exactly the header Stripe's library writes", () => {
    const signed = signHeaders({ provider: "stripe", secret: Buffer.from(SECRET), body: BODY, nowMs: NOW_MS + 999, headers: [] });
    expect(signed).toEqual([["Stripe-Signature", stripeHeader(NOW_S)]]);
  });

  it("round-trips through our verifier and Stripe's constructEvent", () => {
    const nowMs = Date.now();
    const signed = signHeaders({ provider: "stripe", secret: Buffer.from(SECRET), body: BODY, nowMs, headers: [] });
    expect(verdict(verify(signed, { nowMs }))).toBe("verified");
    const [[, value]] = signed as [HeaderPair];
    expect(stripe.webhooks.constructEvent(BODY, value, SECRET, undefined, undefined, nowMs).type).toBe("invoice.paid");
    expect(() => stripe.webhooks.constructEvent(BODY, value, "whsec_other", undefined, undefined, nowMs)).toThrow(/No signatures found matching/);
  });

  it("round-trips a binary body through our verifier", () => {
    const body = Buffer.from([0x00, 0xc0, 0xaf, 0xff, 0x00]);
    const signed = signHeaders({ provider: "stripe", secret: Buffer.from(SECRET), body, nowMs: NOW_MS, headers: [] });
    expect(verdict(verify(signed, { body }))).toBe("verified");
    expect(verdict(verify(signed, { body: Buffer.from([0x00, 0xc0, 0xaf, 0xff]) }))).toBe("signature_mismatch");
  });
});

describe("stripe event type", () => {
  it("is the body's top-level type", () => {
    expect(canonicalEventType("stripe", [], BODY)).toBe("invoice.paid");
    expect(canonicalEventType("stripe", [], Buffer.from('{"data":{"type":"nested"}}'))).toBe("");
    expect(canonicalEventType("stripe", [], Buffer.from("{not json"))).toBe("");
  });
});
