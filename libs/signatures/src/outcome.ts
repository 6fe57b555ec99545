import type { CheckName, FailureReason, SchemeVerifyInput, VerifyCheck, VerifyOutcome } from "./scheme.js";

export const DEFAULT_TOLERANCE_S = 300;

/** Each check, when it fails, is the reason for the verdict; no reason is written anywhere else. */
const REASON_WHEN_FAILED: Record<CheckName, FailureReason> = {
  header_present: "missing_signature",
  header_well_formed: "malformed_signature",
  signature_matches: "signature_mismatch",
  timestamp_fresh: "timestamp_out_of_tolerance",
};

/**
 * Private so that every outcome comes from the builders below, which all end in a
 * signature_matches check: a scheme cannot verify by returning fewer checks.
 */
function outcomeOf(checks: VerifyCheck[]): VerifyOutcome {
  const failure = checks.find((check) => !check.ok);
  return failure === undefined
    ? { verification: "verified", checks }
    : { verification: "failed", reason: REASON_WHEN_FAILED[failure.name], checks };
}

const passed = (name: CheckName): VerifyCheck => ({ name, ok: true });

export function missingSignature(): VerifyOutcome {
  return outcomeOf([{ name: "header_present", ok: false }]);
}

export function malformedSignature(): VerifyOutcome {
  return outcomeOf([passed("header_present"), { name: "header_well_formed", ok: false }]);
}

/** The verdict for a scheme without a timestamp, once its headers were read. */
export function matched(signatureMatches: boolean): VerifyOutcome {
  return outcomeOf([passed("header_present"), passed("header_well_formed"), { name: "signature_matches", ok: signatureMatches }]);
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
 * always reported as `signature_mismatch` whatever the timestamp. Both checks are still
 * recorded, so that diagnosis can tell a wrong secret on a stale capture from one on a fresh one.
 */
export function timedOutcome(
  signatureMatches: boolean,
  timestampS: number,
  input: Pick<SchemeVerifyInput, "nowMs" | "toleranceS">,
  defaultToleranceS: number,
): VerifyOutcome {
  const tolerance = input.toleranceS !== undefined && Number.isFinite(input.toleranceS) && input.toleranceS >= 0 ? input.toleranceS : defaultToleranceS;
  const skew = Math.abs(unixSeconds(input.nowMs) - timestampS);
  const outcome = outcomeOf([
    passed("header_present"),
    passed("header_well_formed"),
    { name: "signature_matches", ok: signatureMatches },
    // Written so that a NaN clock fails closed.
    { name: "timestamp_fresh", ok: skew <= tolerance },
  ]);
  // Non-enumerable: diagnosis reads it, while `toEqual` and JSON still see the outcome's own shape.
  return Object.defineProperty(outcome, "signedAtS", { value: timestampS, enumerable: false });
}

export function unixSeconds(nowMs: number): number {
  return Math.floor(nowMs / 1000);
}
