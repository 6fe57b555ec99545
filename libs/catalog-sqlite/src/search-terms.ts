/**
 * The terms of the search index (FTS5, ascii tokenizer): each event's document holds its
 * endpoint's own term, e<endpoint key>, and each of its search tokens in lower-case hex. A
 * query ANDs the endpoint's term with the tokens searched for.
 */

import { TOKEN_BYTES } from "@whc/sealing";

const HEX_DIGITS = Buffer.from("0123456789abcdef", "latin1");

/**
 * One search document: the endpoint's own term, then each packed token in lower-case hex, written
 * byte by byte into one buffer and read back as one string (an append indexes dozens of
 * tokens per event; a string per token was most of the store's JavaScript time). A token
 * repeated in a body needs no removal: the index keeps one posting per document and term.
 */
export function searchDocument(endpointKey: number, packed: Uint8Array): string {
  const head = `e${endpointKey}`;
  const doc = Buffer.allocUnsafe(head.length + (packed.length / TOKEN_BYTES) * (1 + 2 * TOKEN_BYTES));
  let at = doc.write(head, 0, "latin1");
  for (let i = 0; i < packed.length; i += 1) {
    if (i % TOKEN_BYTES === 0) doc[at++] = 0x20;
    const b = packed[i] as number;
    doc[at++] = HEX_DIGITS[b >> 4] as number;
    doc[at++] = HEX_DIGITS[b & 15] as number;
  }
  return doc.toString("latin1", 0, at);
}

/** The distinct tokens of a query, as lower-case hex terms, in first-seen order. */
export function uniqueTerms(tokens: readonly Uint8Array[]): string[] {
  return [...new Set(tokens.map((t) => Buffer.from(t.buffer, t.byteOffset, t.byteLength).toString("hex")))];
}

/** An FTS5 AND query over the same terms; every term is quoted, so none is an operator. */
export function searchMatch(endpointKey: number, terms: readonly string[]): string {
  return [`"e${endpointKey}"`, ...terms.map((t) => `"${t}"`)].join(" AND ");
}
