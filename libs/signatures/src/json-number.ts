/**
 * One top-level number field of a JSON object body, read without building the document, as
 * json-fields.ts reads strings (which it does only: a number there answers undefined). Linear
 * signs a millisecond timestamp that lives in its body as a number, not in a header.
 *
 * Nested values are stepped over by counting brackets outside strings; as with JSON.parse, a
 * later duplicate key replaces an earlier one. Anything that is not a JSON number (a string,
 * null, a body that is not an object) answers undefined.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN = new Set([0x7b, 0x5b]);
const CLOSE = new Set([0x7d, 0x5d]);
const JSON_NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

const isSpace = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function skipSpace(b: Uint8Array, i: number): number {
  while (isSpace(b[i])) i += 1;
  return i;
}

/** Index just past the string whose opening quote is at `i`, or -1. */
function stringEnd(b: Uint8Array, i: number): number {
  for (let j = i + 1; j < b.length; j += 1) {
    if (b[j] === BACKSLASH) j += 1;
    else if (b[j] === QUOTE) return j + 1;
  }
  return -1;
}

/** Index just past the value starting at `i`, or -1 when the body ends inside it. */
function valueEnd(b: Uint8Array, i: number): number {
  if (b[i] === QUOTE) return stringEnd(b, i);
  if (OPEN.has(b[i] as number)) {
    let depth = 0;
    for (let j = i; j < b.length; j += 1) {
      const c = b[j] as number;
      if (c === QUOTE) {
        const end = stringEnd(b, j);
        if (end < 0) return -1;
        j = end - 1;
      } else if (OPEN.has(c)) depth += 1;
      else if (CLOSE.has(c) && --depth === 0) return j + 1;
    }
    return -1;
  }
  let j = i;
  while (j < b.length && b[j] !== COMMA && !CLOSE.has(b[j] as number) && !isSpace(b[j])) j += 1;
  return j > i ? j : -1;
}

function keyIs(b: Uint8Array, start: number, end: number, name: string): boolean {
  const raw = Buffer.from(b.buffer, b.byteOffset + start, end - start);
  if (!raw.includes(BACKSLASH)) return raw.toString("utf8") === `"${name}"`;
  try {
    return JSON.parse(raw.toString("utf8")) === name;
  } catch {
    return false;
  }
}

export function topLevelNumber(body: Uint8Array, name: string): number | undefined {
  let i = skipSpace(body, body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0);
  if (body[i] !== 0x7b) return undefined;
  let found: number | undefined;
  i = skipSpace(body, i + 1);
  while (body[i] === QUOTE) {
    const keyEnd = stringEnd(body, i);
    if (keyEnd < 0) break;
    const wanted = keyIs(body, i, keyEnd, name);
    i = skipSpace(body, keyEnd);
    if (body[i] !== COLON) break;
    i = skipSpace(body, i + 1);
    const end = valueEnd(body, i);
    if (end < 0) break;
    if (wanted) {
      const token = Buffer.from(body.buffer, body.byteOffset + i, end - i).toString("latin1");
      found = JSON_NUMBER.test(token) ? Number(token) : undefined;
    }
    i = skipSpace(body, end);
    if (body[i] !== COMMA) break;
    i = skipSpace(body, i + 1);
  }
  return found;
}
