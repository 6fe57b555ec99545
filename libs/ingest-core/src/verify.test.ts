import { describe, it, expect } from "vitest";
import Stripe from "stripe";
import { verifyCapture, type VerifyInput } from "./verify.js";

const stripe = new Stripe("sk_test_unused");
const OLD = "whsec_old_secret_0123456789";
const NEW = "whsec_new_secret_9876543210";
const body = Buffer.from(JSON.stringify({ id: "evt_1", type: "invoice.paid" }));
const T0 = Date.UTC(2026, 10, 23, 10, 0, 0);

/** A capture signed by Stripe's own library with `secret`, at `nowMs`. */
function signedBy(secret: string, nowMs: number): VerifyInput["headers"] {
  const header = stripe.webhooks.generateTestHeaderString({ payload: body.toString(), secret, timestamp: Math.floor(nowMs / 1000) });
  return [
    ["Content-Type", "application/json"],
    ["Stripe-Signature", header],
  ];
}

function judge(headers: VerifyInput["headers"], nowMs: number, rotation?: { previous: string; validUntilMs: number }) {
  return verifyCapture({
    provider: "stripe",
    headers,
    body,
    complete: true,
    secret: Buffer.from(NEW),
    previousSecret: rotation ? Buffer.from(rotation.previous) : undefined,
    previousValidUntilMs: rotation?.validUntilMs,
    genericSignatureHeader: "",
    genericSignaturePrefix: "",
    nowMs,
  });
}

describe("verification across a secret rotation", () => {
  const rotation = { previous: OLD, validUntilMs: T0 + 3_600_000 };

  it("accepts the new secret, and says so", () => {
    expect(judge(signedBy(NEW, T0), T0, rotation)).toMatchObject({ verification: "verified", matchedSecret: "current" });
  });

  it("accepts the previous secret inside the grace period, and says which one matched", () => {
    const later = T0 + 3_599_000;
    expect(judge(signedBy(OLD, later), later, rotation)).toMatchObject({ verification: "verified", matchedSecret: "previous" });
  });

  it("refuses the previous secret once the grace period is over", () => {
    const after = T0 + 3_600_000;
    expect(judge(signedBy(OLD, after), after, rotation)).toMatchObject({
      verification: "failed",
      failureReason: "signature_mismatch",
      matchedSecret: "none",
    });
  });

  it("refuses a secret that was never the endpoint's, inside the grace too", () => {
    expect(judge(signedBy("whsec_someone_else", T0), T0, rotation)).toMatchObject({ verification: "failed", matchedSecret: "none" });
  });

  it("reports the current secret's reason when neither verifies (a stale timestamp stays stale)", () => {
    const stale = signedBy(NEW, T0 - 3_600_000);
    expect(judge(stale, T0, rotation)).toMatchObject({ verification: "failed", failureReason: "timestamp_out_of_tolerance" });
  });
});
