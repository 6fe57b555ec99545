import type { Provider } from "./registry.js";
import type { SchemeSignInput, SchemeVerifyInput } from "./scheme.js";

export type { FailureReason, VerifyOutcome } from "./scheme.js";

export interface VerifyInput extends SchemeVerifyInput {
  /** The effective provider. */
  provider: Provider;
}

export interface SignInput extends SchemeSignInput {
  provider: Provider;
}
