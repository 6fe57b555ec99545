import { createHmac, timingSafeEqual } from "node:crypto";

/** Every scheme here signs with HMAC-SHA256, whose digest is 32 bytes. */
export const SHA256_BYTES = 32;

export function hmac(algorithm: "sha256" | "sha1", key: Uint8Array, ...parts: readonly (string | Uint8Array)[]): Buffer {
  const mac = createHmac(algorithm, key);
  for (const part of parts) mac.update(part);
  return mac.digest();
}

/** Constant-time equality; inputs of different lengths are unequal, never an exception. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Compares against every candidate so the time taken does not reveal which one matched. */
export function anyEqual(candidates: readonly Uint8Array[], expected: Uint8Array): boolean {
  let found = false;
  for (const candidate of candidates) found = bytesEqual(candidate, expected) || found;
  return found;
}

const HEX = /^[0-9a-fA-F]*$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Hex in either case, or undefined; Buffer.from alone would silently stop at the first bad digit. */
export function decodeHex(text: string): Buffer | undefined {
  return text.length > 0 && text.length % 2 === 0 && HEX.test(text) ? Buffer.from(text, "hex") : undefined;
}

/**
 * Standard base64 (padding optional), or undefined. Buffer.from alone skips characters it does
 * not know, so the text must also be exactly what the decoded bytes encode to.
 */
export function decodeBase64(text: string): Buffer | undefined {
  if (text.length === 0 || !BASE64.test(text)) return undefined;
  const bytes = Buffer.from(text, "base64");
  const unpadded = (s: string) => s.replace(/=+$/, "");
  return bytes.length > 0 && unpadded(bytes.toString("base64")) === unpadded(text) ? bytes : undefined;
}

/** A SHA-256 digest written as `<prefix><hex>`, the prefix matched case-insensitively. */
export function prefixedHexDigest(value: string, prefix: string): Buffer | undefined {
  if (value.slice(0, prefix.length).toLowerCase() !== prefix.toLowerCase()) return undefined;
  const digest = decodeHex(value.slice(prefix.length));
  return digest?.length === SHA256_BYTES ? digest : undefined;
}
