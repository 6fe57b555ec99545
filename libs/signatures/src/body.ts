import { isUtf8 } from "node:buffer";

/**
 * Reading a body for its event type. Bodies are arbitrary bytes (binary, truncated, not UTF-8),
 * so everything here answers undefined instead of throwing. JSON bodies are read by
 * json-fields.ts.
 */

/** Past this, parsing costs more than an event type is worth. */
const MAX_PARSE_BYTES = 8 * 1024 * 1024;

/** Only ever given bytes already checked to be UTF-8; a byte order mark is kept, as in a pair of the decoded text. */
const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });

const AMPERSAND = 0x26;
const EQUALS = 0x3d;
const PERCENT = 0x25;
const PLUS = 0x2b;
const QUESTION = 0x3f;

/** Whether bytes[start, end) are exactly `name`'s UTF-8 bytes. */
function bytesAre(bytes: Uint8Array, start: number, end: number, name: Uint8Array): boolean {
  if (end - start !== name.length) return false;
  for (let i = 0; i < name.length; i += 1) if (bytes[start + i] !== name[i]) return false;
  return true;
}

/**
 * The first value of one field of an `application/x-www-form-urlencoded` body, as
 * `URLSearchParams.get` gives it (undefined for an empty body or one that is not UTF-8).
 * Names are compared byte by byte where they lie and only the matching pair is decoded, by
 * URLSearchParams itself: parsing a whole 8 MiB form of two million pairs took 200-260 ms of
 * the event loop.
 */
export function formField(body: Uint8Array, name: string): string | undefined {
  if (body.length === 0 || body.length > MAX_PARSE_BYTES || !isUtf8(body)) return undefined;
  const wanted = Buffer.from(name, "utf8");
  const decodePair = (start: number, end: number) => new URLSearchParams(utf8.decode(body.subarray(start, end)));
  // As URLSearchParams over the decoded text: a byte order mark, then a "?", are not part of it.
  let start = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  if (body[start] === QUESTION) start += 1;
  let eq = -1;
  let encoded = false;
  for (let i = start; i <= body.length; i += 1) {
    const c = i < body.length ? body[i] : AMPERSAND;
    if (c === AMPERSAND) {
      if (i > start) {
        const nameEnd = eq < 0 ? i : eq;
        const matches = encoded ? decodePair(start, i).keys().next().value === name : bytesAre(body, start, nameEnd, wanted);
        if (matches) return decodePair(start, i).values().next().value ?? "";
      }
      start = i + 1;
      eq = -1;
      encoded = false;
    } else if (eq < 0) {
      if (c === EQUALS) eq = i;
      else if (c === PERCENT || c === PLUS) encoded = true;
    }
  }
  return undefined;
}
