import { verifySignature } from "../verify.js";
import type { HeaderPair } from "../headers.js";
import type { Provider } from "../registry.js";
import type { CheckName, VerifyCheck } from "../scheme.js";
import type { VerifyInput, VerifyOutcome } from "../types.js";

/** The clock every signature test runs at. */
export const NOW_MS = 1_790_000_000_000;
export const NOW_S = NOW_MS / 1000;

/** "verified", or the failure reason. */
export const verdict = (o: VerifyOutcome) => (o.verification === "verified" ? "verified" : o.reason);

const passed = (...names: CheckName[]): VerifyCheck[] => names.map((name) => ({ name, ok: true }));

/** The checks of a verified outcome, for schemes without and with a timestamp. */
export const UNTIMED_PASSED = passed("header_present", "header_well_formed", "signature_matches");
export const TIMED_PASSED = passed("header_present", "header_well_formed", "signature_matches", "timestamp_fresh");

/** verifySignature for one provider, secret and body at NOW_MS; `extra` overrides any input. */
export function verifierFor(provider: Provider, secret: string, body: Uint8Array) {
  return (headers: readonly HeaderPair[], extra: Partial<VerifyInput> = {}): VerifyOutcome =>
    verifySignature({ provider, headers, body, secret: Buffer.from(secret), nowMs: NOW_MS, ...extra });
}
