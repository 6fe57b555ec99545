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
  const unjudged = { provider, canonicalEventType: eventType, failureReason: "" as const, matchedSecret: "none" as const };
  if (!input.secret || input.secret.length === 0 || !input.complete) return { ...unjudged, verification: "unverified" };
  const check = (secret: Buffer) =>
    verifySignature({
      provider,
      headers: input.headers,
      body: input.body,
      url: input.url,
      secret,
      genericSignatureHeader: input.genericSignatureHeader || undefined,
      genericSignaturePrefix: input.genericSignaturePrefix || undefined,
      nowMs: input.nowMs,
    });
  const outcome = check(input.secret);
  if (outcome.verification === "verified") return { ...unjudged, verification: "verified", matchedSecret: "current" };
  // A provider switches to a new secret gradually (Shopify: up to an hour): until the grace
  // ends, a signature made with the previous secret is still the sender's own.
  const { previousSecret, previousValidUntilMs } = input;
  if (previousSecret && previousSecret.length > 0 && previousValidUntilMs !== undefined && input.nowMs < previousValidUntilMs) {
    if (check(previousSecret).verification === "verified") return { ...unjudged, verification: "verified", matchedSecret: "previous" };
  }
  return { ...unjudged, verification: "failed", failureReason: outcome.reason };
}
