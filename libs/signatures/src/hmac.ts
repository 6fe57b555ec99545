import { createHmac, timingSafeEqual } from "node:crypto";

export function hmac(algorithm: "sha256" | "sha1", key: Uint8Array, ...parts: (string | Uint8Array)[]): Buffer {
  const mac = createHmac(algorithm, key);
  for (const part of parts) mac.update(part);
  return mac.digest();
}

/** Constant-time equality; different lengths are simply unequal. */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

const HEX = /^[0-9a-fA-F]+$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

export function fromHex(text: string): Buffer | undefined {
  return text.length > 0 && text.length % 2 === 0 && HEX.test(text) ? Buffer.from(text, "hex") : undefined;
}

export function fromBase64(text: string): Buffer | undefined {
  return text.length > 0 && text.length % 4 === 0 && BASE64.test(text) ? Buffer.from(text, "base64") : undefined;
}
