import { createHmac } from "node:crypto";

/** Bytes kept of each HMAC: 2^-64 odds that two different words share a token. */
export const TOKEN_BYTES = 8;

const WORD = /[\p{L}\p{N}]+/gu;
const decoder = new TextDecoder("utf-8", { fatal: false });

/** The distinct lower-cased words (runs of letters and digits) of a text. */
export function words(text: string): Set<string> {
  const out = new Set<string>();
  for (const match of text.normalize("NFC").matchAll(WORD)) out.add(match[0].toLowerCase());
  return out;
}

/**
 * Keyed blind-index tokens: HMAC-SHA256(key, word) cut to TOKEN_BYTES. The store only ever
 * sees these, never a word; without the key they cannot be matched against a dictionary.
 */
export function blindTokens(key: Uint8Array, input: string | Uint8Array): Uint8Array[] {
  const text = typeof input === "string" ? input : decoder.decode(input);
  const tokens: Uint8Array[] = [];
  for (const word of words(text)) {
    tokens.push(createHmac("sha256", key).update(word, "utf8").digest().subarray(0, TOKEN_BYTES));
  }
  return tokens;
}
