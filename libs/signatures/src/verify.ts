import { providerScheme } from "./registry.js";
import type { VerifyInput, VerifyOutcome } from "./types.js";

/** Verifies a capture with its provider's own published scheme; never throws on bad input. */
export function verifySignature(input: VerifyInput): VerifyOutcome {
  return providerScheme(input.provider).verify(input);
}
