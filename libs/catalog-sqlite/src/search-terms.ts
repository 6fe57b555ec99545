/**
 * The terms of the search index (FTS5, ascii tokenizer): each event's document holds its
 * endpoint's own term, e<endpoint key>, and each of its search tokens in lower-case hex. A
 * query ANDs the endpoint's term with the tokens searched for. Captures not in the index yet
 * wait in `search_pending`, a row per append of their entries (search-index.ts).
 */

import { TOKEN_BYTES } from "@whc/sealing";

const HEX_DIGITS = Buffer.from("0123456789abcdef", "latin1");

/** The bytes of one search document at most: its endpoint's term, then a space and 16 hex digits per token. */
export function searchDocumentBytes(packedLength: number): number {
  return 1 + 20 + (packedLength / TOKEN_BYTES) * (1 + 2 * TOKEN_BYTES);
}

/**
 * Writes one search document into `into` from `at` (room for searchDocumentBytes) and answers
 * where it ends: the endpoint's own term, then each packed token in lower-case hex, byte by
 * byte. The index takes the bytes as they are (no string made and converted per document:
 * that was most of the indexing's JavaScript). A token repeated in a body needs no removal:
 * the index keeps one posting per document and term.
 */
export function writeSearchDocument(endpointKey: number, packed: Uint8Array, into: Buffer, at: number): number {
  into[at++] = 0x65; // e
  at += into.write(String(endpointKey), at, "latin1");
  for (let i = 0; i < packed.length; i += TOKEN_BYTES) {
    into[at++] = 0x20;
    for (let j = i; j < i + TOKEN_BYTES; j += 1) {
      const b = packed[j] as number;
      into[at] = HEX_DIGITS[b >> 4] as number;
      into[at + 1] = HEX_DIGITS[b & 15] as number;
      at += 2;
    }
  }
  return at;
}

/** One search document as a string (for tests and migrations). */
export function searchDocument(endpointKey: number, packed: Uint8Array): string {
  const doc = Buffer.allocUnsafe(searchDocumentBytes(packed.length));
  return doc.toString("latin1", 0, writeSearchDocument(endpointKey, packed, doc, 0));
}

/** A capture waiting for the index: its commit sequence, its endpoint's key, its packed tokens. */
export interface PendingEntry {
  seq: number;
  endpointKey: number;
  tokens: Uint8Array;
}

/** Per entry: seq and endpoint key (float64 each), the tokens' length (uint32), the tokens. */
const ENTRY_HEAD = 8 + 8 + 4;

/** One append's pending entries in one value (one row of search_pending per commit, not one per capture). */
export function packPending(entries: readonly PendingEntry[]): Buffer {
  let length = 0;
  for (const e of entries) length += ENTRY_HEAD + e.tokens.length;
  const out = Buffer.allocUnsafe(length);
  let at = 0;
  for (const e of entries) {
    at = out.writeDoubleLE(e.seq, at);
    at = out.writeDoubleLE(e.endpointKey, at);
    at = out.writeUInt32LE(e.tokens.length, at);
    out.set(e.tokens, at);
    at += e.tokens.length;
  }
  return out;
}

/** The entries packPending wrote; tokens are views into `packed`. */
export function unpackPending(packed: Buffer): PendingEntry[] {
  const entries: PendingEntry[] = [];
  for (let at = 0; at + ENTRY_HEAD <= packed.length; ) {
    const seq = packed.readDoubleLE(at);
    const endpointKey = packed.readDoubleLE(at + 8);
    const length = packed.readUInt32LE(at + 16);
    at += ENTRY_HEAD;
    entries.push({ seq, endpointKey, tokens: packed.subarray(at, at + length) });
    at += length;
  }
  return entries;
}

/** The distinct tokens of a query, as lower-case hex terms, in first-seen order. */
export function uniqueTerms(tokens: readonly Uint8Array[]): string[] {
  return [...new Set(tokens.map((t) => Buffer.from(t.buffer, t.byteOffset, t.byteLength).toString("hex")))];
}

/** Hex terms (uniqueTerms) packed back into tokens, for hasEveryToken. */
export function packTerms(terms: readonly string[]): Buffer {
  return Buffer.from(terms.join(""), "hex");
}

/**
 * Whether every token of `wanted` is one of the tokens packed in `packed` (both TOKEN_BYTES
 * apart; a token only counts at a token's offset): a pending capture's match, as the index's
 * AND of terms is for the others.
 */
export function hasEveryToken(packed: Uint8Array, wanted: Uint8Array): boolean {
  const have = Buffer.from(packed.buffer, packed.byteOffset, packed.byteLength);
  const want = Buffer.from(wanted.buffer, wanted.byteOffset, wanted.byteLength);
  for (let w = 0; w + TOKEN_BYTES <= want.length; w += TOKEN_BYTES) {
    const first = want.readUInt32LE(w);
    const second = want.readUInt32LE(w + 4);
    let found = false;
    for (let at = 0; at + TOKEN_BYTES <= have.length; at += TOKEN_BYTES) {
      if (have.readUInt32LE(at) === first && have.readUInt32LE(at + 4) === second) {
        found = true;
        break;
      }
    }
    if (!found) return false;
  }
  return true;
}

/** An FTS5 AND query over the same terms; every term is quoted, so none is an operator. */
export function searchMatch(endpointKey: number, terms: readonly string[]): string {
  return [`"e${endpointKey}"`, ...terms.map((t) => `"${t}"`)].join(" AND ");
}
