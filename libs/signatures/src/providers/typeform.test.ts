import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalEventType, detectProvider, signHeaders, type HeaderPair } from "../index.js";
import { NOW_MS, UNTIMED_PASSED, verdict, verifierFor } from "../testing/index.js";

// Typeform has no verification library on npm and publishes no example digest; the expected
// header follows typeform.com/developers/webhooks/secure-your-webhooks: "sha256=" + base64 of
// HMAC-SHA256 of the whole body, keyed with the webhook's secret.
const SECRET = "typeform-webhook-secret";
const PAYLOAD = '{"event_id":"01HX","event_type":"form_response","form_response":{"form_id":"lT4Z3j","answers":[{"type":"text","text":"Zoë"}]}}';
const BODY = Buffer.from(PAYLOAD, "utf8");

const typeformSignature = (secret = SECRET, body: Uint8Array = BODY) => `sha256=${createHmac("sha256", secret).update(body).digest("base64")}`;
const verify = verifierFor("typeform", SECRET, BODY);
const sample = (signature: string): HeaderPair[] => [["Content-Type", "application/json"], ["Typeform-Signature", signature], ["User-Agent", "Typeform Webhooks"]];

describe("typeform verification", () => {
  it("accepts the documented signature", () => {
    expect(verify(sample(typeformSignature()))).toEqual({ verification: "verified", checks: UNTIMED_PASSED });
    expect(verdict(verify([["typeform-signature", typeformSignature()]]))).toBe("verified");
  });

  it("rejects a wrong secret and a changed body", () => {
    expect(verdict(verify(sample(typeformSignature("other"))))).toBe("signature_mismatch");
    expect(verdict(verify(sample(typeformSignature()), { body: Buffer.from(`${PAYLOAD}\n`) }))).toBe("signature_mismatch");
  });

  it("reports a missing header", () => {
    expect(verdict(verify([]))).toBe("missing_signature");
  });

  it.each([
    ["empty", ""],
    ["no prefix", createHmac("sha256", SECRET).update(BODY).digest("base64")],
    ["hex instead of base64", `sha256=${createHmac("sha256", SECRET).update(BODY).digest("hex")}`],
    ["not base64", "sha256=!!!!"],
    ["short", "sha256=AAAA"],
  ])("reports a malformed header (%s)", (_, value) => {
    expect(verdict(verify([["Typeform-Signature", value]]))).toBe("malformed_signature");
  });
});

describe("typeform detection, event type and signing", () => {
  it("is detected by Typeform-Signature", () => {
    expect(detectProvider(sample(typeformSignature()))).toBe("typeform");
  });

  it("names the event by the body's event_type", () => {
    expect(canonicalEventType("typeform", [], BODY)).toBe("form_response");
    expect(canonicalEventType("typeform", [], Buffer.from("{}"))).toBe("");
  });

  it("signs as Typeform does, and verify accepts it", () => {
    const signed = signHeaders({ provider: "typeform", secret: Buffer.from(SECRET), body: BODY, nowMs: NOW_MS, headers: [] });
    expect(signed).toEqual([["Typeform-Signature", typeformSignature()]]);
    expect(verdict(verify(signed))).toBe("verified");
  });
});
