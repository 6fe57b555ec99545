import { bytesEqual, decodeBase64, decodeHex, hmac } from "./crypto.js";
import { header, type HeaderPair } from "./headers.js";
import { malformedSignature, matched, missingSignature } from "./outcome.js";
import type { SchemeVerifyInput, VerifyOutcome } from "./scheme.js";

/**
 * The most common scheme there is: one header holding an HMAC of the raw body and nothing else
 * (no timestamp), differing between providers only in the hash, the encoding and a prefix.
 */
export interface BodyHmac {
  /** The header, as the provider documents it. */
  header: string;
  algorithm: "sha256" | "sha1";
  encoding: "hex" | "base64";
  /** What precedes the digest (`sha256=`), matched case-insensitively; "" when nothing does. */
  prefix: string;
}

const DIGEST_BYTES = { sha256: 32, sha1: 20 } as const;

function digestOf(value: string, spec: BodyHmac): Buffer | undefined {
  if (value.slice(0, spec.prefix.length).toLowerCase() !== spec.prefix.toLowerCase()) return undefined;
  const text = value.slice(spec.prefix.length);
  const digest = spec.encoding === "hex" ? decodeHex(text) : decodeBase64(text);
  return digest?.length === DIGEST_BYTES[spec.algorithm] ? digest : undefined;
}

export function verifyBodyHmac(input: SchemeVerifyInput, spec: BodyHmac): VerifyOutcome {
  const value = header(input.headers, spec.header);
  if (value === undefined) return missingSignature();
  const digest = digestOf(value, spec);
  if (digest === undefined) return malformedSignature();
  return matched(bytesEqual(digest, hmac(spec.algorithm, input.secret, input.body)));
}

export function signBodyHmac(secret: Uint8Array, body: Uint8Array, spec: BodyHmac): HeaderPair[] {
  return [[spec.header, `${spec.prefix}${hmac(spec.algorithm, secret, body).toString(spec.encoding)}`]];
}
