import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { canonicalEventType, detectProvider, signHeaders, type HeaderPair } from "../index.js";
import { NOW_MS, NOW_S, TIMED_PASSED, verdict, verifierFor } from "../test-support.js";

/**
 * Resend delivers through Svix (https://resend.com/docs/webhooks/verify-webhooks-requests), whose scheme is Standard Webhooks under svix- header
 * names: the signatures here are made by the standardwebhooks library (svix needs Node 22).
 */
const SECRET = `whsec_${randomBytes(24).toString("base64")}`;
const PAYLOAD = '{"type":"email.delivered","created_at":"2026-09-21T13:33:20.000Z","data":{"created_at":"2026-09-21 13:33:19.837+00","email_id":"56761188-7520-42d8-8898-ff6fc54ce618","from":"Acme <onboarding@resend.dev>","to":["delivered@resend.dev"],"subject":"Sending this example"}}';
const BODY = Buffer.from(PAYLOAD, "utf8");
const library = new Webhook(SECRET);

function svixHeaders(timestampS = NOW_S, wh = library): HeaderPair[] {
  const id = "msg_2Lh9KRb0pzN4LePd3XiA0fTOzYj";
  return [
    ["svix-id", id],
    ["svix-timestamp", String(timestampS)],
    ["svix-signature", wh.sign(id, new Date(timestampS * 1000), PAYLOAD)],
  ];
}

const verify = verifierFor("resend", SECRET, BODY);

describe("resend verification", () => {
  it("accepts a signature made by the standardwebhooks library, under svix- names", () => {
    expect(verify(svixHeaders())).toEqual({ verification: "verified", checks: TIMED_PASSED });
  });

  it("rejects a wrong secret and a changed body", () => {
    expect(verdict(verify(svixHeaders(NOW_S, new Webhook(randomBytes(24), { format: "raw" }))))).toBe("signature_mismatch");
    expect(verdict(verify(svixHeaders(), { body: Buffer.from(PAYLOAD.replace("email.delivered", "email.bounced")) }))).toBe("signature_mismatch");
  });

  it("reports a missing and a malformed signature", () => {
    expect(verdict(verify([]))).toBe("missing_signature");
    expect(verdict(verify(svixHeaders().map(([n, v]) => [n, n === "svix-signature" ? "v1,not base64!" : v] as const)))).toBe("malformed_signature");
    expect(verdict(verify(svixHeaders().filter(([n]) => n !== "svix-timestamp")))).toBe("malformed_signature");
  });

  it("rejects a timestamp 6 minutes old, as Svix's libraries do", () => {
    expect(verdict(verify(svixHeaders(NOW_S - 360)))).toBe("timestamp_out_of_tolerance");
    expect(verdict(verify(svixHeaders(NOW_S - 300)))).toBe("verified");
  });
});

describe("resend signing", () => {
  it("keeps the svix- spelling and message id, and the library accepts it", () => {
    const nowMs = Date.now();
    const signed = signHeaders({ provider: "resend", secret: Buffer.from(SECRET), body: BODY, nowMs, headers: svixHeaders() });
    expect(signed.map(([n]) => n)).toEqual(["svix-id", "svix-timestamp", "svix-signature"]);
    expect(verdict(verify(signed, { nowMs }))).toBe("verified");
    const asWebhook = Object.fromEntries(signed.map(([n, v]) => [n.replace("svix-", "webhook-"), v]));
    expect(library.verify(PAYLOAD, asWebhook)).toEqual(JSON.parse(PAYLOAD));
    expect(verdict(verify(signHeaders({ provider: "resend", secret: Buffer.from(SECRET), body: BODY, nowMs: NOW_MS, headers: [] })))).toBe("verified");
  });
});

describe("resend detection and event type", () => {
  it("is never detected: its headers are every Svix sender's, so the endpoint names it", () => {
    expect(detectProvider(svixHeaders())).toBe("standard_webhooks");
  });

  it("is the body's top-level type", () => {
    expect(canonicalEventType("resend", svixHeaders(), BODY)).toBe("email.delivered");
    expect(canonicalEventType("resend", [], Buffer.from('{"data":{"type":"x"}}'))).toBe("");
  });
});
