import type { HeaderPair } from "./headers.js";

export const PROVIDERS = ["generic", "stripe", "github", "slack", "shopify", "standard_webhooks"] as const;
export type Provider = (typeof PROVIDERS)[number];

export type FailureReason = "missing_signature" | "malformed_signature" | "signature_mismatch" | "timestamp_out_of_tolerance";
export type VerifyOutcome = { verification: "verified" } | { verification: "failed"; reason: FailureReason };

export interface VerifyInput {
  provider: Provider;
  headers: readonly HeaderPair[];
  body: Uint8Array;
  /** The endpoint secret as the user gave it (UTF-8 bytes). */
  secret: Uint8Array;
  genericSignatureHeader?: string | undefined;
  genericSignaturePrefix?: string | undefined;
  nowMs: number;
  /** Seconds either side of now; default 300. */
  toleranceS?: number;
}

export interface SignInput {
  provider: Provider;
  secret: Uint8Array;
  body: Uint8Array;
  nowMs: number;
  /** The original request's headers (to keep its webhook-id and header family). */
  headers: readonly HeaderPair[];
  genericSignatureHeader?: string | undefined;
  genericSignaturePrefix?: string | undefined;
}
