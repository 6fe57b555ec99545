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

function token(key: Uint8Array, word: string): Uint8Array {
  return createHmac("sha256", key).update(word, "utf8").digest().subarray(0, TOKEN_BYTES);
}

/**
 * Keyed blind-index tokens: HMAC-SHA256(key, word) cut to TOKEN_BYTES. The store only ever
 * sees these, never a word; without the key they cannot be matched against a dictionary.
 */
export function blindTokens(key: Uint8Array, input: string | Uint8Array): Uint8Array[] {
  const text = typeof input === "string" ? input : decoder.decode(input);
  return [...words(text)].map((w) => token(key, w));
}

export type BlindIndexer = (input: string | Uint8Array) => Uint8Array[];

/**
 * blindTokens with a bounded memory of recent words: webhook bodies of one provider repeat
 * most of their words (field names, enum values), and an HMAC costs about 2 µs while a map
 * lookup costs 50 ns. The memory is the process's own (never written anywhere); long words
 * are not kept, and it is cleared wholesale when full.
 */
export function createBlindIndexer(key: Uint8Array, maxEntries = 50_000): BlindIndexer {
  const memory = new Map<string, Uint8Array>();
  return (input) => {
    const text = typeof input === "string" ? input : decoder.decode(input);
    const out: Uint8Array[] = [];
    for (const word of words(text)) {
      let t = memory.get(word);
      if (!t) {
        t = token(key, word);
        if (word.length <= 64) {
          if (memory.size >= maxEntries) memory.clear();
          memory.set(word, t);
        }
      }
      out.push(t);
    }
    return out;
  };
}
