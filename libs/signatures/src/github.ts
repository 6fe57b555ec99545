import { bytesEqual, hmac, prefixedHexDigest } from "./crypto.js";
import { header, type HeaderPair } from "./headers.js";
import { failed, matched } from "./outcome.js";
import type { VerifyInput, VerifyOutcome } from "./types.js";

export const GITHUB_HEADER_NAMES = ["x-hub-signature-256", "x-hub-signature"];

/**
 * `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, body)>`. The SHA-1 `X-Hub-Signature`
 * GitHub also sends is not accepted on its own: it exists only for old consumers, and SHA-256
 * is always sent alongside it.
 */
export function verifyGitHub(input: VerifyInput): VerifyOutcome {
  const value = header(input.headers, "X-Hub-Signature-256");
  if (value === undefined) return failed("missing_signature");
  const digest = prefixedHexDigest(value, "sha256=");
  if (digest === undefined) return failed("malformed_signature");
  return matched(bytesEqual(digest, hmac("sha256", input.secret, input.body)));
}

/** Both headers, since GitHub sends both and a receiver may check either. */
export function signGitHub(secret: Uint8Array, body: Uint8Array): HeaderPair[] {
  return [
    ["X-Hub-Signature-256", `sha256=${hmac("sha256", secret, body).toString("hex")}`],
    ["X-Hub-Signature", `sha1=${hmac("sha1", secret, body).toString("hex")}`],
  ];
}
