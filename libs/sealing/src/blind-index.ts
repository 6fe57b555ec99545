import { isAscii } from "node:buffer";
import { createHmac } from "node:crypto";

/** Bytes kept of each HMAC: 2^-64 odds that two different words share a token. */
export const TOKEN_BYTES = 8;

/**
 * Distinct words indexed per body, the first ones in body order. A webhook has tens to a few
 * thousand; a 1 MiB body of random words has 116,000, which took 600 ms of ingest's event loop
 * to index (and as long again in the store), for search terms nobody would type.
 */
export const MAX_TOKENS_PER_BODY = 4096;

const WORD = /[\p{L}\p{N}]+/gu;
const decoder = new TextDecoder("utf-8", { fatal: false });

/** The distinct lower-cased words (runs of letters and digits) of a text. */
export function words(text: string): Set<string> {
  const out = new Set<string>();
  for (const match of text.normalize("NFC").matchAll(WORD)) out.add(match[0].toLowerCase());
  return out;
}

/** 1 for the ASCII letters and digits: in an ASCII text, exactly what WORD matches. */
const ASCII_WORD_BYTE = new Uint8Array(256);
for (let b = 0; b < 128; b += 1) ASCII_WORD_BYTE[b] = /[A-Za-z0-9]/.test(String.fromCharCode(b)) ? 1 : 0;

const lower = (c: number) => (c >= 65 && c <= 90 ? c | 0x20 : c);

/**
 * FNV-1a over a lower-case word's code units, cut to `bits` bits: for an ASCII word, the hash the
 * indexer's byte scan computes over its lower-cased bytes.
 */
function wordHash(word: string, bits: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < word.length; i += 1) h = Math.imul(h ^ word.charCodeAt(i), 0x01000193);
  return (h >>> 0) & ((1 << bits) - 1);
}

/** Whether bytes[start, end), lower-cased, spell `word`. */
function spells(word: string, bytes: Uint8Array, start: number, end: number): boolean {
  if (word.length !== end - start) return false;
  for (let i = start; i < end; i += 1) if (lower(bytes[i] as number) !== word.charCodeAt(i - start)) return false;
  return true;
}

function token(key: Uint8Array, word: string): Uint8Array {
  return createHmac("sha256", key).update(word, "utf8").digest().subarray(0, TOKEN_BYTES);
}

/**
 * Keyed blind-index tokens: HMAC-SHA256(key, word) cut to TOKEN_BYTES. The store only ever
 * sees these, never a word; without the key they cannot be matched against a dictionary.
 */
export function blindTokens(key: Uint8Array, input: string | Uint8Array, maxTokens = MAX_TOKENS_PER_BODY): Uint8Array[] {
  return [...words(typeof input === "string" ? input : decoder.decode(input))].slice(0, maxTokens).map((w) => token(key, w));
}

export type BlindIndexer = (input: string | Uint8Array) => Uint8Array[];

/** Slots of the indexer's note of words met once (createBlindIndexer). */
const DOOR_SLOTS = 2 ** 14;

interface Remembered {
  word: string;
  /** wordHash's of the word: where the memory finds it. */
  hash: number;
  token: Uint8Array;
  /** The last body the word was seen in: repeats within a body are skipped with it. */
  seenIn: number;
}

/**
 * blindTokens with a bounded memory of recent words: webhook bodies of one provider repeat
 * most of their words (field names, enum values), and an HMAC costs about 2 µs while a map
 * lookup costs 50 ns. The memory is the process's own (never written anywhere); long words
 * are not kept, and it is cleared wholesale, between bodies, once it is full. A word is
 * remembered the second time it is met, not the first: the ids every event brings (its own,
 * its object's) never come back, and remembering them kept their strings and tokens alive
 * until the next clear (with new ids in every body, 5-8 % more CPU per capture).
 *
 * Most bodies are ASCII, where NFC changes nothing and letters and digits are [A-Za-z0-9]:
 * those are scanned byte by byte, each word hashed where it lies and looked up by that
 * number, so a remembered word costs no string at all. Two words with the same hash are told
 * apart by their spelling, and only the first is remembered. Same tokens, same order as
 * blindTokens, at most `maxTokens` of them. `hashBits` is for tests, which shrink it to force
 * collisions.
 */
export function createBlindIndexer(
  key: Uint8Array,
  maxEntries = 50_000,
  hashBits = 30,
  maxTokens = MAX_TOKENS_PER_BODY,
): BlindIndexer {
  // The memory: an open-addressed table of hashes (at most half full) pointing into `entries`;
  // a Map keyed by the hash cost a fifth of the indexer's time (4.9 against 4.0 µs a body).
  const slotCount = 2 ** Math.ceil(Math.log2(2 * maxEntries + 1));
  let slots = new Int32Array(slotCount); // an entry's index + 1; 0: empty
  let entries: Remembered[] = [];
  const recall = (hash: number): Remembered | undefined => {
    for (let s = hash & (slotCount - 1); ; s = (s + 1) & (slotCount - 1)) {
      const at = slots[s] as number;
      if (at === 0) return undefined;
      const entry = entries[at - 1] as Remembered;
      if (entry.hash === hash) return entry;
    }
  };
  const remember = (entry: Remembered): void => {
    entries.push(entry);
    let s = entry.hash & (slotCount - 1);
    while (slots[s] !== 0) s = (s + 1) & (slotCount - 1);
    slots[s] = entries.length;
  };
  // The body being indexed (a call runs to its end before the next starts): made once, not
  // as closures per body.
  let body = 0;
  let out: Uint8Array[] = [];
  let unremembered: Set<string> | undefined;
  const seen = (entry: Remembered) => {
    if (entry.seenIn === body) return;
    entry.seenIn = body;
    out.push(entry.token);
  };
  // Words met once are only noted here (their hash + 1, one slot per hash, a later word may take
  // it), and remembered the next time they are met: an id, new in every body, never comes back,
  // and remembering each filled the memory with words nobody repeats.
  const door = new Int32Array(DOOR_SLOTS);
  const fresh = (word: string, hash: number, known: Remembered | undefined) => {
    if (unremembered?.has(word)) return;
    const rememberable = word.length <= 64 && known === undefined;
    if (rememberable && door[hash & (DOOR_SLOTS - 1)] === hash + 1) {
      const entry = { word, hash, token: token(key, word), seenIn: body };
      remember(entry);
      out.push(entry.token);
      return;
    }
    if (rememberable) door[hash & (DOOR_SLOTS - 1)] = hash + 1;
    (unremembered ??= new Set()).add(word);
    out.push(token(key, word));
  };
  return (input) => {
    if (entries.length >= maxEntries) {
      slots = new Int32Array(slotCount);
      entries = [];
    }
    body += 1;
    out = [];
    unremembered = undefined;

    if (typeof input !== "string" && isAscii(input)) {
      const text = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
      const length = input.length;
      const mask = (1 << hashBits) - 1;
      for (let i = 0; i < length && out.length < maxTokens; ) {
        // What lies between words (punctuation, a pretty-printed body's indentation, padding)
        // in a loop of its own.
        while (i < length && ASCII_WORD_BYTE[input[i] as number] === 0) i += 1;
        if (i === length) break;
        const start = i;
        // The word's end and its hash (wordHash's, over the lower-cased bytes) in one pass.
        let h = 0x811c9dc5;
        for (; i < length; i += 1) {
          const c = input[i] as number;
          if (ASCII_WORD_BYTE[c] === 0) break;
          h = Math.imul(h ^ lower(c), 0x01000193);
        }
        const hash = (h >>> 0) & mask;
        const known = recall(hash);
        if (known !== undefined && spells(known.word, input, start, i)) seen(known);
        else fresh(text.toString("latin1", start, i).toLowerCase(), hash, known);
      }
      return out;
    }
    for (const word of words(typeof input === "string" ? input : decoder.decode(input))) {
      if (out.length >= maxTokens) break;
      const hash = wordHash(word, hashBits);
      const known = recall(hash);
      if (known !== undefined && known.word === word) seen(known);
      else fresh(word, hash, known);
    }
    return out;
  };
}

/**
 * Tokens as they cross to the catalog on append: TOKEN_BYTES each, concatenated into one
 * buffer (one protobuf field instead of one per token, design §8).
 */
export function packSearchTokens(tokens: readonly Uint8Array[]): Uint8Array {
  for (const t of tokens) if (t.length !== TOKEN_BYTES) throw new RangeError(`a search token is ${t.length} bytes, not ${TOKEN_BYTES}`);
  // Buffer.concat: a slice of Node's buffer pool for a body's few hundred bytes, where a typed
  // array of its own cost an allocation (0.8 against 2.1 µs for 41 tokens). What crosses to the
  // store's thread is copied there (append-codec.ts), so the pool is never dragged along.
  return Buffer.concat(tokens, tokens.length * TOKEN_BYTES);
}

/** The tokens of packSearchTokens, as views on the packed buffer; undefined when its length is no whole number of tokens. */
export function unpackSearchTokens(packed: Uint8Array): Uint8Array[] | undefined {
  if (packed.length % TOKEN_BYTES !== 0) return undefined;
  const tokens: Uint8Array[] = [];
  // A view made directly, not by subarray(), which looks the constructor up on every call.
  for (let at = 0; at < packed.length; at += TOKEN_BYTES) tokens.push(new Uint8Array(packed.buffer, packed.byteOffset + at, TOKEN_BYTES));
  return tokens;
}
