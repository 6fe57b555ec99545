import { bytesEqual, hmac, prefixedHexDigest } from "./crypto.js";
import { header, type HeaderPair } from "./headers.js";
import { failed, matched } from "./outcome.js";
import type { VerifyInput, VerifyOutcome } from "./types.js";

export const DEFAULT_GENERIC_HEADER = "X-Signature";

/** The configured signature header; an empty setting means "not configured". */
export function genericHeaderName(configured: string | undefined): string {
  const name = configured?.trim();
  return name ? name : DEFAULT_GENERIC_HEADER;
}

/**
 * `<configured header>: <prefix><hex HMAC-SHA256(secret, body)>`. The digest may be in either
 * hex case and the prefix is matched case-insensitively, since senders differ on both.
 */
export function verifyGeneric(input: VerifyInput): VerifyOutcome {
  const value = header(input.headers, genericHeaderName(input.genericSignatureHeader));
  if (value === undefined) return failed("missing_signature");
  const digest = prefixedHexDigest(value, input.genericSignaturePrefix ?? "");
  if (digest === undefined) return failed("malformed_signature");
  return matched(bytesEqual(digest, hmac("sha256", input.secret, input.body)));
}

export function signGeneric(secret: Uint8Array, body: Uint8Array, headerName: string | undefined, prefix: string | undefined): HeaderPair[] {
  return [[genericHeaderName(headerName), `${prefix ?? ""}${hmac("sha256", secret, body).toString("hex")}`]];
}
