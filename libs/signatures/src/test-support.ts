import { verifySignature } from "./verify.js";
import type { HeaderPair } from "./headers.js";
import type { Provider, VerifyInput, VerifyOutcome } from "./types.js";

/** The clock every signature test runs at. */
export const NOW_MS = 1_790_000_000_000;
export const NOW_S = NOW_MS / 1000;

/** "verified", or the failure reason. */
export const verdict = (o: VerifyOutcome) => (o.verification === "verified" ? "verified" : o.reason);

/** verifySignature for one provider, secret and body at NOW_MS; `extra` overrides any input. */
export function verifierFor(provider: Provider, secret: string, body: Uint8Array) {
  return (headers: readonly HeaderPair[], extra: Partial<VerifyInput> = {}): VerifyOutcome =>
    verifySignature({ provider, headers, body, secret: Buffer.from(secret), nowMs: NOW_MS, ...extra });
}
