import {
  canonicalEventType,
  detectProvider,
  PROVIDERS,
  verifySignature,
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
  /** False when the body was cut off (over the inbound limit): its signature is not judged. */
  complete: boolean;
  secret?: Buffer | undefined;
  genericSignatureHeader: string;
  genericSignaturePrefix: string;
  nowMs: number;
}

export interface VerifyResult {
  provider: Provider;
  verification: Verification;
  failureReason: FailureReason | "";
  canonicalEventType: string;
}

function configured(value: string): Provider {
  return (PROVIDERS as readonly string[]).includes(value) ? (value as Provider) : "generic";
}

/**
 * The capture's provider (configured, else detected from its headers), its verdict with the
 * provider's own scheme when the endpoint has a secret and the whole body arrived, and its
 * event type.
 */
export function verifyCapture(input: VerifyInput): VerifyResult {
  const setting = configured(input.provider);
  const provider = setting === "generic" ? (detectProvider(input.headers) ?? "generic") : setting;
  const eventType = canonicalEventType(provider, input.headers, input.body);
  if (!input.secret || input.secret.length === 0 || !input.complete) {
    return { provider, verification: "unverified", failureReason: "", canonicalEventType: eventType };
  }
  const outcome = verifySignature({
    provider,
    headers: input.headers,
    body: input.body,
    secret: input.secret,
    genericSignatureHeader: input.genericSignatureHeader || undefined,
    genericSignaturePrefix: input.genericSignaturePrefix || undefined,
    nowMs: input.nowMs,
  });
  return outcome.verification === "verified"
    ? { provider, verification: "verified", failureReason: "", canonicalEventType: eventType }
    : { provider, verification: "failed", failureReason: outcome.reason, canonicalEventType: eventType };
}
