import {
  canonicalEventType,
  detectProvider,
  diagnoseSignature,
  PROVIDERS,
  verifyWithSecrets,
  type DiagnoseInput,
  type SignatureDiagnosis,
  type FailureReason,
  type HeaderPair,
  type Provider,
} from "@whc/signatures";

export type Verification = "verified" | "failed" | "unverified";

export interface VerifyInput {
  /** The endpoint's configured provider; `generic` lets the headers decide. */
  provider: string;
  headers: readonly HeaderPair[];
  body: Buffer;
  /** The full URL the sender called, for URL-signed schemes. */
  url?: string | undefined;
  /** False when the body was cut off (over the inbound limit): its signature is not judged. */
  complete: boolean;
  secret?: Buffer | undefined;
  /** The secret before the last rotation, still accepted until `previousValidUntilMs`. */
  previousSecret?: Buffer | undefined;
  previousValidUntilMs?: number | undefined;
  genericSignatureHeader: string;
  genericSignaturePrefix: string;
  nowMs: number;
}

export interface VerifyResult {
  provider: Provider;
  verification: Verification;
  failureReason: FailureReason | "";
  canonicalEventType: string;
  /** Which secret verified the signature: after a rotation the previous one may, for a grace period. */
  matchedSecret: "current" | "previous" | "none";
  /** Why, in words a person can act on (design §12); the plain check above is not run twice. */
  signature: SignatureDiagnosis;
}

function configured(value: string): Provider {
  return (PROVIDERS as readonly string[]).includes(value) ? (value as Provider) : "generic";
}

/**
 * The capture's provider (configured, else detected from its headers), its verdict with the
 * provider's own scheme when the endpoint has a secret and the whole body arrived (the current
 * secret, then the previous one while its grace lasts: a provider switches over gradually), its
 * event type, and the diagnosis of that verdict.
 */
export function verifyCapture(input: VerifyInput): VerifyResult {
  const setting = configured(input.provider);
  const provider = setting === "generic" ? (detectProvider(input.headers) ?? "generic") : setting;
  const eventType = canonicalEventType(provider, input.headers, input.body);
  const diagnose: DiagnoseInput = {
    provider,
    headers: input.headers,
    body: input.body,
    url: input.url,
    secret: input.secret,
    previousSecret: input.previousSecret,
    previousValidUntilMs: input.previousValidUntilMs,
    nowMs: input.nowMs,
    complete: input.complete,
    genericSignatureHeader: input.genericSignatureHeader || undefined,
    genericSignaturePrefix: input.genericSignaturePrefix || undefined,
    timestampOfUnverified: false,
    plain: undefined,
  };
  const judged = Boolean(input.secret && input.secret.length > 0 && input.complete);
  const plain = judged ? verifyWithSecrets(diagnose) : undefined;
  // One object for both calls, its shape fixed up front: a copy with two more keys cost more
  // than the diagnosis itself on the happy path.
  diagnose.plain = plain;
  const signature = diagnoseSignature(diagnose);
  // Literals, not spreads of a common part: this runs on every capture (design §20).
  if (!plain) return { provider, canonicalEventType: eventType, signature, verification: "unverified", failureReason: "", matchedSecret: "none" };
  if (plain.outcome.verification === "verified") {
    return { provider, canonicalEventType: eventType, signature, verification: "verified", failureReason: "", matchedSecret: plain.matchedSecret };
  }
  return { provider, canonicalEventType: eventType, signature, verification: "failed", failureReason: plain.outcome.reason, matchedSecret: "none" };
}
