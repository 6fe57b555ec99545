import { describe, it, expect } from "vitest";
import Stripe from "stripe";
import { bodyKind } from "@whc/signatures";
import { diagnosticJson, type CaptureDiagnosis } from "./capture.js";
import { verifyCapture } from "./verify.js";

const body = Buffer.from(JSON.stringify({ id: "evt_1", type: "invoice.paid", note: 'quote " and \\ and ü' }));
const SECRET = "whsec_diagnostic_secret_0123";

function diagnosisOf(secret: string | undefined, headers: [string, string][]): CaptureDiagnosis {
  const verified = verifyCapture({
    provider: "stripe",
    headers,
    body,
    complete: true,
    secret: secret === undefined ? undefined : Buffer.from(secret),
    genericSignatureHeader: "",
    genericSignaturePrefix: "",
    nowMs: Date.now(),
  });
  return { bodySha256: "ab".repeat(32), contentType: bodyKind("application/json; charset=utf-8", body), signature: verified.signature };
}

describe("diagnosticJson", () => {
  const signed = new Stripe("sk_test_unused").webhooks.generateTestHeaderString({ payload: body.toString(), secret: SECRET });
  const cases: [string, CaptureDiagnosis][] = [
    // No secret: the signature's diagnosis is one frozen object per provider, its text kept.
    ["nobody judged the signature", diagnosisOf(undefined, [["Stripe-Signature", signed]])],
    ["verified", diagnosisOf(SECRET, [["Stripe-Signature", signed]])],
    ["failed", diagnosisOf("whsec_another_secret", [["Stripe-Signature", signed]])],
    // The body stored as received: its hash is left to the reader (undefined, not written).
    ["stored whole, no hash", { ...diagnosisOf(SECRET, [["Stripe-Signature", signed]]), bodySha256: undefined }],
  ];

  it.each(cases)("is the JSON of the diagnostic object, keys in order (%s)", (_, diagnosis) => {
    for (const handshake of [undefined, "slack_url_verification"] as const) {
      for (const source of ["default", "handshake", "rule"] as const) {
        const expected = JSON.stringify({ ...diagnosis, ...(handshake ? { handshake } : {}), responseSource: source });
        // Twice: the second time from the kept text of a shared diagnosis.
        expect(diagnosticJson(diagnosis, source, handshake)).toBe(expected);
        expect(diagnosticJson(diagnosis, source, handshake)).toBe(expected);
      }
    }
  });

  it("is each capture's own text when diagnostics made of shared parts alternate", () => {
    const shared = { ...diagnosisOf(undefined, [["Stripe-Signature", signed]]), bodySha256: undefined };
    const otherKind = { ...shared, contentType: bodyKind("text/plain", Buffer.from("a=1")) };
    const hashed = { ...shared, bodySha256: "cd".repeat(32) };
    expect(Object.isFrozen(shared.signature) && Object.isFrozen(shared.contentType)).toBe(true);
    const sequence = [shared, shared, otherKind, shared, hashed, shared, otherKind, otherKind];
    for (const [i, diagnosis] of sequence.entries()) {
      const source = (["default", "rule", "handshake"] as const)[i % 3] as "default" | "rule" | "handshake";
      const handshake = i % 4 === 3 ? "slack_url_verification" : undefined;
      const expected = JSON.stringify({ ...diagnosis, ...(handshake ? { handshake } : {}), responseSource: source });
      expect(diagnosticJson(diagnosis, source, handshake)).toBe(expected);
      expect(diagnosticJson(diagnosis, source, handshake)).toBe(expected);
    }
  });

  it("tells the verdicts apart", () => {
    const verdicts = cases.map(([, d]) => (JSON.parse(diagnosticJson(d, "default")) as { signature: { verdict: string } }).signature.verdict);
    expect(verdicts).toEqual(["unverified", "verified", "failed", "verified"]);
    expect(Object.isFrozen(cases[0]?.[1].signature)).toBe(true);
  });
});
