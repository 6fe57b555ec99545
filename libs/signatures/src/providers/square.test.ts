import { createHmac } from "node:crypto";
import { WebhooksHelper } from "square";
import { describe, expect, it } from "vitest";
import { canonicalEventType, detectProvider, signHeaders, type HeaderPair } from "../index.js";
import { NOW_MS, UNTIMED_PASSED, verdict, verifierFor } from "../testing/index.js";

const SIGNATURE_KEY = "Ibxx_5AKakO-3qeNVR61Dw";
const URL = "https://hooks.example.com/h/acme/square";
const PAYLOAD =
  '{"merchant_id":"MLEFBHHSJGVHD","type":"payment.updated","event_id":"ac3ac95b-f97d-458c-a6e6-18981597e05f","created_at":"2026-05-01T12:00:00Z","data":{"type":"payment","id":"KkAkhdMsgzn59SM8A89WgKwekxLZY","object":{}}}';
const BODY = Buffer.from(PAYLOAD);

const verify = verifierFor("square", SIGNATURE_KEY, BODY);
const signed = (secret = SIGNATURE_KEY, url = URL, body: Uint8Array = BODY) => signHeaders({ provider: "square", secret: Buffer.from(secret), body, nowMs: NOW_MS, url, headers: [] });
const valueOf = (headers: HeaderPair[]) => headers.find(([name]) => name === "x-square-hmacsha256-signature")![1];

/** Square's own check: WebhooksHelper.verifySignature, as integrators call it. */
const squareAccepts = (signatureHeader: string, signatureKey = SIGNATURE_KEY, notificationUrl = URL) =>
  WebhooksHelper.verifySignature({ requestBody: PAYLOAD, signatureHeader, signatureKey, notificationUrl });

describe("square verification", () => {
  it("signs what Square's WebhooksHelper accepts, and verifies it", async () => {
    const headers = signed();
    expect(await squareAccepts(valueOf(headers))).toBe(true);
    expect(verify(headers, { url: URL })).toEqual({ verification: "verified", checks: UNTIMED_PASSED });
  });

  it("agrees with WebhooksHelper on a wrong key and another URL", async () => {
    const value = valueOf(signed());
    expect(await squareAccepts(value, "another-signature-key")).toBe(false);
    expect(verdict(verify([["x-square-hmacsha256-signature", value]], { url: URL, secret: Buffer.from("another-signature-key") }))).toBe("signature_mismatch");
    expect(await squareAccepts(value, SIGNATURE_KEY, `${URL}/`)).toBe(false);
    expect(verdict(verify([["x-square-hmacsha256-signature", value]], { url: `${URL}/` }))).toBe("signature_mismatch");
    expect(verdict(verify([["x-square-hmacsha256-signature", value]]))).toBe("signature_mismatch");
  });

  it("signs the URL followed by the raw body", () => {
    const digest = createHmac("sha256", SIGNATURE_KEY).update(URL + PAYLOAD).digest("base64");
    expect(verdict(verify([["X-Square-HmacSha256-Signature", digest]], { url: URL }))).toBe("verified");
    expect(verdict(verify([["X-Square-HmacSha256-Signature", digest]], { url: URL, body: Buffer.from(PAYLOAD + "\n") }))).toBe("signature_mismatch");
  });

  it("reports a missing header, including when only the legacy SHA-1 one came", () => {
    expect(verdict(verify([], { url: URL }))).toBe("missing_signature");
    expect(verdict(verify([["x-square-signature", "AAAAAAAAAAAAAAAAAAAAAAAAAAA="]], { url: URL }))).toBe("missing_signature");
  });

  it.each([
    ["empty", ""],
    ["not base64", "not-a-signature!"],
    ["a SHA-1 length digest", Buffer.alloc(20).toString("base64")],
  ])("reports a malformed header (%s)", (_, value) => {
    expect(verdict(verify([["x-square-hmacsha256-signature", value]], { url: URL }))).toBe("malformed_signature");
  });
});

describe("square detection, event type and re-signing", () => {
  it("is detected by its signature headers", () => {
    expect(detectProvider(signed())).toBe("square");
    expect(detectProvider([["x-square-signature", "AA=="]])).toBe("square");
  });

  it("names the event by the body's type", () => {
    expect(canonicalEventType("square", [], BODY)).toBe("payment.updated");
  });

  it("re-signs toward the target URL, dropping the legacy header", async () => {
    const target = "https://staging.example.com/square";
    const headers = signed(SIGNATURE_KEY, target);
    expect(await squareAccepts(valueOf(headers), SIGNATURE_KEY, target)).toBe(true);
    expect(signHeaders({ provider: "square", secret: Buffer.from(SIGNATURE_KEY), body: BODY, nowMs: NOW_MS, headers: [] }).map(([n]) => n)).toEqual([
      "x-square-hmacsha256-signature",
    ]);
  });
});
