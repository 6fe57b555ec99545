import type { HeaderPair } from "./headers.js";

export type Provider = "generic" | "stripe" | "github" | "slack" | "shopify" | "standard_webhooks";

export const PROVIDERS: readonly Provider[] = Object.freeze(["generic", "stripe", "github", "slack", "shopify", "standard_webhooks"] as const);

export type FailureReason = "missing_signature" | "malformed_signature" | "signature_mismatch" | "timestamp_out_of_tolerance";

export type VerifyOutcome = { verification: "verified" } | { verification: "failed"; reason: FailureReason };

export interface VerifyInput {
  /** The effective provider. */
  provider: Provider;
  headers: readonly HeaderPair[];
  /** The exact raw body bytes. */
  body: Uint8Array;
  /** The endpoint secret as the user typed it (UTF-8 bytes). */
  secret: Uint8Array;
  /** generic only: the header carrying the signature; X-Signature when empty or absent. */
  genericSignatureHeader?: string;
  /** generic only: what precedes the hex digest, e.g. "sha256="; "" when absent. */
  genericSignaturePrefix?: string;
  nowMs: number;
  /** Seconds either side of now; default 300. */
  toleranceS?: number;
}

export interface SignInput {
  provider: Provider;
  /** As the user typed it. */
  secret: Uint8Array;
  body: Uint8Array;
  /** The fresh timestamp to sign with. */
  nowMs: number;
  /** The original request's headers (Standard Webhooks keeps their message id and header family). */
  headers: readonly HeaderPair[];
  genericSignatureHeader?: string;
  genericSignaturePrefix?: string;
}
