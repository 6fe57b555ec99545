import { bytesEqual, decodeBase64, hmac, SHA256_BYTES } from "./crypto.js";
import { header, type HeaderPair } from "./headers.js";
import { failed, matched } from "./outcome.js";
import type { VerifyInput, VerifyOutcome } from "./types.js";

export const SHOPIFY_HEADER_NAMES = ["x-shopify-hmac-sha256"];

/** `X-Shopify-Hmac-Sha256: <base64 HMAC-SHA256(secret, body)>`. */
export function verifyShopify(input: VerifyInput): VerifyOutcome {
  const value = header(input.headers, "X-Shopify-Hmac-Sha256");
  if (value === undefined) return failed("missing_signature");
  const digest = decodeBase64(value);
  if (digest?.length !== SHA256_BYTES) return failed("malformed_signature");
  return matched(bytesEqual(digest, hmac("sha256", input.secret, input.body)));
}

export function signShopify(secret: Uint8Array, body: Uint8Array): HeaderPair[] {
  return [["X-Shopify-Hmac-Sha256", hmac("sha256", secret, body).toString("base64")]];
}
