import type { FailureReason, VerifyInput, VerifyOutcome } from "./types.js";

export const DEFAULT_TOLERANCE_S = 300;

export function verified(): VerifyOutcome {
  return { verification: "verified" };
}

export function failed(reason: FailureReason): VerifyOutcome {
  return { verification: "failed", reason };
}

export function matched(signatureMatches: boolean): VerifyOutcome {
  return signatureMatches ? verified() : failed("signature_mismatch");
}

/**
 * Unix seconds as the providers write them: plain ASCII digits. Callers sign the header's own
 * text, not a re-printed number, so that leading zeros survive exactly as they were signed.
 */
export function parseUnixSeconds(text: string | undefined): number | undefined {
  return text !== undefined && /^[0-9]{1,15}$/.test(text) ? Number(text) : undefined;
}

/**
 * The verdict for a timestamped scheme. The signature is judged first, then the timestamp, as
 * Stripe's own library does: `timestamp_out_of_tolerance` then only ever means "authentic, but
 * signed too long ago or in the future" (a replay or a skewed clock), and a wrong secret is
 * always reported as `signature_mismatch` whatever the timestamp.
 */
export function timedOutcome(signatureMatches: boolean, timestampS: number, input: Pick<VerifyInput, "nowMs" | "toleranceS">): VerifyOutcome {
  if (!signatureMatches) return failed("signature_mismatch");
  const tolerance =
    input.toleranceS !== undefined && Number.isFinite(input.toleranceS) && input.toleranceS >= 0 ? input.toleranceS : DEFAULT_TOLERANCE_S;
  const skew = Math.abs(Math.floor(input.nowMs / 1000) - timestampS);
  // Written so that a NaN clock fails closed.
  return skew <= tolerance ? verified() : failed("timestamp_out_of_tolerance");
}

export function unixSeconds(nowMs: number): number {
  return Math.floor(nowMs / 1000);
}
