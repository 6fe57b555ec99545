import { isAscii } from "node:buffer";
import { createHmac } from "node:crypto";

/** Bytes kept of each HMAC: 2^-64 odds that two different words share a token. */
export const TOKEN_BYTES = 8;

const WORD = /[\p{L}\p{N}]+/gu;
const decoder = new TextDecoder("utf-8", { fatal: false });

const ASCII_WORD = /[a-z0-9]+/g;

/** The distinct lower-cased words (runs of letters and digits) of a text. */
export function words(text: string): Set<string> {
  const out = new Set<string>();
  for (const match of text.normalize("NFC").matchAll(WORD)) out.add(match[0].toLowerCase());
  return out;
}

/**
 * Calls `each` with every word of a body as sent, repeats included, in order; words() gives
 * the distinct ones. Most webhook bodies are ASCII, where NFC changes nothing and letters and
 * digits are [A-Za-z0-9]: those are scanned without UTF-8 decoding or Unicode classes.
 */
function forEachWord(input: string | Uint8Array, each: (word: string) => void): void {
  if (typeof input !== "string" && isAscii(input)) {
    const text = Buffer.from(input.buffer, input.byteOffset, input.byteLength).toString("latin1").toLowerCase();
    ASCII_WORD.lastIndex = 0;
    for (let m = ASCII_WORD.exec(text); m !== null; m = ASCII_WORD.exec(text)) each(m[0]);
    return;
  }
  for (const word of words(typeof input === "string" ? input : decoder.decode(input))) each(word);
}

function token(key: Uint8Array, word: string): Uint8Array {
  return createHmac("sha256", key).update(word, "utf8").digest().subarray(0, TOKEN_BYTES);
}

/**
 * Keyed blind-index tokens: HMAC-SHA256(key, word) cut to TOKEN_BYTES. The store only ever
 * sees these, never a word; without the key they cannot be matched against a dictionary.
 */
export function blindTokens(key: Uint8Array, input: string | Uint8Array): Uint8Array[] {
  return [...words(typeof input === "string" ? input : decoder.decode(input))].map((w) => token(key, w));
}

export type BlindIndexer = (input: string | Uint8Array) => Uint8Array[];

/**
 * blindTokens with a bounded memory of recent words: webhook bodies of one provider repeat
 * most of their words (field names, enum values), and an HMAC costs about 2 µs while a map
 * lookup costs 50 ns. The memory is the process's own (never written anywhere); long words
 * are not kept, and it is cleared wholesale, between bodies, once it is full. A remembered
 * word also remembers the last body it was seen in, which is how repeats within a body are
 * skipped without a set per body.
 */
export function createBlindIndexer(key: Uint8Array, maxEntries = 50_000): BlindIndexer {
  const memory = new Map<string, { token: Uint8Array; seenIn: number }>();
  let body = 0;
  return (input) => {
    if (memory.size >= maxEntries) memory.clear();
    body += 1;
    const out: Uint8Array[] = [];
    let unremembered: Set<string> | undefined;
    forEachWord(input, (word) => {
      const known = memory.get(word);
      if (known) {
        if (known.seenIn !== body) {
          known.seenIn = body;
          out.push(known.token);
        }
      } else if (word.length <= 64) {
        const entry = { token: token(key, word), seenIn: body };
        memory.set(word, entry);
        out.push(entry.token);
      } else if (!(unremembered ??= new Set()).has(word)) {
        unremembered.add(word);
        out.push(token(key, word));
      }
    });
    return out;
  };
}
