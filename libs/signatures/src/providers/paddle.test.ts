import { createHmac } from "node:crypto";
import { Paddle } from "@paddle/paddle-node-sdk";
import { describe, expect, it } from "vitest";
import { canonicalEventType, detectProvider, signHeaders, type HeaderPair } from "../index.js";
import { NOW_MS, NOW_S, TIMED_PASSED, verdict, verifierFor } from "../testing/index.js";

const SECRET = "pdl_ntfset_01gkpjp8bkm3tm53kdgkx6sms7_6h3qd3uFSi9YCD3OLYAShQI90XTI5vEI";
const PAYLOAD =
  '{"event_id":"evt_01h8bzakzx3hm2fmen703n5q45","event_type":"transaction.completed","occurred_at":"2026-05-01T12:00:00.000Z","notification_id":"ntf_01h8bzam1z32agrxjwhjgqk8w6","data":{"id":"txn_01h8bz"}}';
const BODY = Buffer.from(PAYLOAD);
/** Through a client: constructing one registers the Node crypto the SDK verifies with. */
const { webhooks } = new Paddle("pdl_sdbx_apikey_test");

const verify = verifierFor("paddle", SECRET, BODY);
const sign = (nowMs = NOW_MS, secret = SECRET) => signHeaders({ provider: "paddle", secret: Buffer.from(secret), body: BODY, nowMs, headers: [] });
/** The header value Paddle documents: ts, then h1 = hex HMAC-SHA256 of "<ts>:<body>". */
const documented = (ts: number, secret = SECRET) => `ts=${ts};h1=${createHmac("sha256", secret).update(`${ts}:${PAYLOAD}`).digest("hex")}`;

describe("paddle verification", () => {
  it("signs what Paddle's SDK accepts, and verifies it", async () => {
    const nowMs = Date.now();
    const headers = sign(nowMs);
    const [[, value]] = headers as [HeaderPair];
    expect(await webhooks.isSignatureValid(PAYLOAD, SECRET, value)).toBe(true);
    expect(verify(headers, { nowMs })).toEqual({ verification: "verified", checks: TIMED_PASSED });
  });

  it("agrees with the SDK on a wrong secret key", async () => {
    const nowMs = Date.now();
    const [[, value]] = sign(nowMs, "pdl_ntfset_other") as [HeaderPair];
    expect(await webhooks.isSignatureValid(PAYLOAD, SECRET, value)).toBe(false);
    expect(verdict(verify([["Paddle-Signature", value]], { nowMs }))).toBe("signature_mismatch");
  });

  it("verifies the documented recipe, and rejects a changed body", () => {
    expect(verdict(verify([["Paddle-Signature", documented(NOW_S)]]))).toBe("verified");
    expect(verdict(verify([["paddle-signature", documented(NOW_S)]], { body: Buffer.from(PAYLOAD + "\n") }))).toBe("signature_mismatch");
  });

  it("accepts any of several h1 (a secret key being rotated)", () => {
    const good = documented(NOW_S).split(";")[1]!;
    const other = documented(NOW_S, "pdl_ntfset_previous").split(";")[1]!;
    expect(verdict(verify([["Paddle-Signature", `ts=${NOW_S};${other};${good}`]]))).toBe("verified");
    expect(verdict(verify([["Paddle-Signature", `ts=${NOW_S};${other}`]]))).toBe("signature_mismatch");
  });

  it("has Paddle's documented five-second tolerance, either way", () => {
    expect(verdict(verify([["Paddle-Signature", documented(NOW_S - 5)]]))).toBe("verified");
    expect(verdict(verify([["Paddle-Signature", documented(NOW_S - 6)]]))).toBe("timestamp_out_of_tolerance");
    expect(verdict(verify([["Paddle-Signature", documented(NOW_S + 6)]]))).toBe("timestamp_out_of_tolerance");
    expect(verdict(verify([["Paddle-Signature", documented(NOW_S - 600)]], { toleranceS: 900 }))).toBe("verified");
  });

  it("agrees with the SDK that a signature 6 seconds old is stale", async () => {
    const nowMs = Date.now();
    const [[, value]] = sign(nowMs - 6000) as [HeaderPair];
    expect(await webhooks.isSignatureValid(PAYLOAD, SECRET, value)).toBe(false);
    expect(verdict(verify([["Paddle-Signature", value]], { nowMs }))).toBe("timestamp_out_of_tolerance");
  });

  it("reports a missing header", () => {
    expect(verdict(verify([]))).toBe("missing_signature");
    expect(verdict(verify([["Stripe-Signature", `t=${NOW_S},v1=${"0".repeat(64)}`]]))).toBe("missing_signature");
  });

  it.each([
    ["empty", ""],
    ["Stripe's syntax", `t=${NOW_S},v1=${"a".repeat(64)}`],
    ["no ts", `h1=${"a".repeat(64)}`],
    ["no h1", `ts=${NOW_S}`],
    ["non-numeric ts", `ts=soon;h1=${"a".repeat(64)}`],
    ["short h1", `ts=${NOW_S};h1=abcd`],
  ])("reports a malformed header (%s)", (_, value) => {
    expect(verdict(verify([["Paddle-Signature", value]]))).toBe("malformed_signature");
  });
});

describe("paddle detection and event type", () => {
  it("is detected by Paddle-Signature and named by event_type", () => {
    expect(detectProvider(sign())).toBe("paddle");
    expect(canonicalEventType("paddle", [], BODY)).toBe("transaction.completed");
  });
});
