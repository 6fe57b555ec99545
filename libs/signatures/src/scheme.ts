import type { HeaderPair } from "./headers.js";
import type { DeliveryIdSource } from "./delivery-id.js";

export type FailureReason = "missing_signature" | "malformed_signature" | "signature_mismatch" | "timestamp_out_of_tolerance";

/**
 * The steps of a verification. The vocabulary is fixed and shared by every scheme so that
 * diagnosis can explain a failure without knowing the provider; each failed check maps to one
 * FailureReason (see outcome.ts).
 */
export type { CheckName } from "@whc/api-model";
import type { CheckName } from "@whc/api-model";

export interface VerifyCheck {
  name: CheckName;
  ok: boolean;
}

/**
 * The verdict, and the checks that ran in the order they ran; `reason` is the first failed check's.
 * `signedAtS` is the timestamp a timed scheme read from its headers (Unix seconds), so that
 * diagnosis can say how stale or early a signature is; timedOutcome sets it, non-enumerable, so
 * that outcomes compared or serialized as plain objects stay as they were.
 */
export type VerifyOutcome =
  | { verification: "verified"; checks: VerifyCheck[]; signedAtS?: number }
  | { verification: "failed"; reason: FailureReason; checks: VerifyCheck[]; signedAtS?: number };

/** What an endpoint configures about signatures. Only generic reads it: the other schemes are fixed. */
export interface SignatureOptions {
  /** generic only: the header carrying the signature; X-Signature when empty or absent. */
  genericSignatureHeader?: string;
  /** generic only: what precedes the hex digest, e.g. "sha256="; "" when absent. */
  genericSignaturePrefix?: string;
}

export interface SchemeVerifyInput extends SignatureOptions {
  /**
   * The full URL the sender called (the webhookUrl with sub-path and query), for schemes that
   * sign the URL (Twilio, Square); undefined when unknown.
   */
  url?: string;
  headers: readonly HeaderPair[];
  /** The exact raw body bytes. */
  body: Uint8Array;
  /** The endpoint secret as the user typed it (UTF-8 bytes). */
  secret: Uint8Array;
  nowMs: number;
  /** Seconds either side of now, for schemes with a timestamp; the scheme's own toleranceS by default. */
  toleranceS?: number;
}

export interface SchemeSignInput extends SignatureOptions {
  /** The URL the re-signed request goes to, for schemes that sign the URL. */
  url?: string;
  /** As the user typed it. */
  secret: Uint8Array;
  body: Uint8Array;
  /** The fresh timestamp to sign with. */
  nowMs: number;
  /** The original request's headers (Standard Webhooks keeps their message id and header family). */
  headers: readonly HeaderPair[];
}

/** How a user finds and enters the secret, shown where the endpoint is configured. */
export interface SecretFormat {
  description: string;
  /** What one looks like, when the provider has a recognisable format. */
  example?: string;
}

/**
 * Everything the system knows about one provider's signatures. One object per provider, in
 * providers/<name>.ts, listed once in registry.ts; every list of providers is derived from there.
 * Methods never throw on what a sender sent: bodies and headers are arbitrary.
 */
export interface ProviderScheme {
  /** snake_case, equal to its key in the registry; stored with every capture. */
  readonly name: string;
  /** The provider's name as people write it. */
  readonly label: string;
  /** What the signature covers and how it is written, in a phrase (for the docs and diagnosis). */
  readonly signs: string;
  /** The headers it signs in, spelled as the provider documents them. */
  readonly signatureHeaders: readonly string[];
  /** The default freshness window in seconds; undefined when the scheme signs no timestamp. */
  readonly toleranceS: number | undefined;
  readonly secretFormat: SecretFormat;
  /**
   * Where the provider puts its own delivery or event id, the same on every retry: what
   * deduplication's `key: "auto"` reads (design §17, ADR 0083); undefined when it sends none.
   */
  readonly deliveryId: DeliveryIdSource | undefined;
  /** Whether these headers came from this provider, from headers only it sends. */
  detect(headers: readonly HeaderPair[]): boolean;
  /** Checks the signature with the provider's own published scheme. */
  verify(input: SchemeVerifyInput): VerifyOutcome;
  /** The provider's name for the event, uncapped; undefined when it has none. */
  eventType(headers: readonly HeaderPair[], body: Uint8Array): string | undefined;
  /** The headers to set for a re-signed replay, as the provider would send them at `nowMs`. */
  sign(input: SchemeSignInput): HeaderPair[];
  /**
   * Lower-case names of every header sign may set, to drop from the original before adding
   * the fresh ones; a new array on each call.
   */
  signedHeaderNames(options: SignatureOptions): string[];
}
