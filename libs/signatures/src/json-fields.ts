/**
 * A few named fields of a JSON object, read without building the document. An event type
 * needs one or two strings near the top of a body that may be megabytes long; JSON.parse
 * builds every nested value first, and a body of nested arrays costs it about 140 ms per MiB
 * (1.4 s for 8 MiB, all of it on ingest's event loop). Here nested values are stepped over by
 * counting brackets outside strings: linear, no allocation, whatever the shape.
 *
 * Only the values asked for are decoded, each with JSON.parse on its own token, so escapes
 * read exactly as JSON.parse reads them. The rest of the body is not validated: a field is
 * found even when something after it is malformed. As with JSON.parse, a later duplicate key
 * replaces an earlier one.
 */

/**
 * Which fields to read: `true` for a string, `"scalar"` for a string, number or boolean (a
 * number or boolean as its JSON text, exactly as sent), or the fields wanted inside an object
 * value.
 */
export interface FieldSpec {
  readonly [name: string]: true | "scalar" | FieldSpec;
}

/** What was found: strings for `true` entries, nested results for object entries. */
export interface Fields {
  readonly [name: string]: string | Fields | undefined;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** What a byte does to the skip over a nested object or array: nothing (0), or one of these. */
const IN_STRING = 1;
const OPENS = 2;
const CLOSES = 3;
const SKIP_KIND = new Uint8Array(256);
SKIP_KIND[QUOTE] = IN_STRING;
SKIP_KIND[OPEN_BRACE] = OPENS;
SKIP_KIND[OPEN_BRACKET] = OPENS;
SKIP_KIND[CLOSE_BRACE] = CLOSES;
SKIP_KIND[CLOSE_BRACKET] = CLOSES;

function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function skipSpace(b: Uint8Array, i: number): number {
  while (isSpace(b[i])) i += 1;
  return i;
}

/** Index just past the string whose opening quote is at `i`, or -1 when the body ends first. */
function stringEnd(b: Uint8Array, i: number): number {
  for (let j = i + 1; j < b.length; j += 1) {
    const c = b[j];
    if (c === BACKSLASH) j += 1;
    else if (c === QUOTE) return j + 1;
  }
  return -1;
}

/** Index just past the value starting at `i`, or -1 when the body ends inside it. */
function valueEnd(b: Uint8Array, i: number): number {
  const first = b[i];
  if (first === QUOTE) return stringEnd(b, i);
  if (first === OPEN_BRACE || first === OPEN_BRACKET) {
    let depth = 0;
    const length = b.length;
    for (let j = i; j < length; j += 1) {
      // One table load per byte: most bytes of a nested value are none of the four kinds.
      const kind = SKIP_KIND[b[j] as number] as number;
      if (kind === 0) continue;
      if (kind === IN_STRING) {
        // The string's end inline: a nested value is mostly strings.
        for (j += 1; j < length; j += 1) {
          const c = b[j];
          if (c === BACKSLASH) j += 1;
          else if (c === QUOTE) break;
        }
        if (j >= length) return -1;
      } else if (kind === OPENS) {
        depth += 1;
      } else {
        depth -= 1;
        if (depth === 0) return j + 1;
      }
    }
    return -1;
  }
  // A number, true, false or null: up to the next delimiter.
  let j = i;
  while (j < b.length && b[j] !== COMMA && b[j] !== CLOSE_BRACE && b[j] !== CLOSE_BRACKET && !isSpace(b[j])) j += 1;
  return j > i ? j : -1;
}

/** A string token [start, end) (quotes included) as JSON.parse reads it; undefined if it is not one. */
function decodeString(b: Uint8Array, start: number, end: number): string | undefined {
  // Plain ASCII without escapes (an event type, nearly always) is its bytes; only others are parsed.
  if (end - start >= 2 && b[start] === QUOTE && b[end - 1] === QUOTE) {
    let plain = true;
    for (let j = start + 1; j < end - 1; j += 1) {
      const c = b[j] as number;
      if (c === BACKSLASH || c === QUOTE || c >= 0x80 || c < 0x20) {
        plain = false;
        break;
      }
    }
    if (plain) return Buffer.from(b.buffer, b.byteOffset + start + 1, end - start - 2).toString("latin1");
  }
  try {
    const value: unknown = JSON.parse(utf8.decode(b.subarray(start, end)));
    return typeof value === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}

/** A string's value, or a number's or boolean's JSON text; undefined for null, objects and arrays. */
function scalarText(b: Uint8Array, start: number, end: number): string | undefined {
  const first = b[start];
  if (first === QUOTE) return decodeString(b, start, end);
  if (first === OPEN_BRACE || first === OPEN_BRACKET || first === 0x6e /* n: null */) return undefined;
  return Buffer.from(b.buffer, b.byteOffset + start, end - start).toString("latin1");
}

/**
 * The name in `spec` that the key token [start, end) (quotes included) spells, compared in place
 * when the key is plain ASCII (the usual case: no string made for the keys not wanted); else
 * decoded and looked up. Undefined when it is not one of them.
 */
function wantedKey(b: Uint8Array, start: number, end: number, spec: FieldSpec): string | undefined {
  const length = end - start - 2;
  for (let j = start + 1; j < end - 1; j += 1) {
    const c = b[j] as number;
    if (c === BACKSLASH || c >= 0x80 || c < 0x20) {
      const key = decodeString(b, start, end);
      return key !== undefined && Object.hasOwn(spec, key) ? key : undefined;
    }
  }
  for (const name in spec) {
    if (name.length !== length || !Object.hasOwn(spec, name)) continue;
    let k = 0;
    while (k < length && name.charCodeAt(k) === b[start + 1 + k]) k += 1;
    if (k === length) return name;
  }
  return undefined;
}

/**
 * Reads the wanted fields of the object whose `{` is at `i`, up to its end or to the first
 * thing that is not JSON (a body cut short keeps what came before the cut).
 */
function readObject(b: Uint8Array, i: number, spec: FieldSpec): Fields {
  const out: Record<string, string | Fields | undefined> = {};
  i = skipSpace(b, i + 1);
  if (b[i] === CLOSE_BRACE) return out;
  for (;;) {
    if (b[i] !== QUOTE) return out;
    const keyEnd = stringEnd(b, i);
    if (keyEnd < 0) return out;
    const key = wantedKey(b, i, keyEnd, spec);
    i = skipSpace(b, keyEnd);
    if (b[i] !== COLON) return out;
    i = skipSpace(b, i + 1);
    const end = valueEnd(b, i);
    if (end < 0) return out;
    const want = key === undefined ? undefined : spec[key];
    if (want === true) {
      out[key as string] = b[i] === QUOTE ? decodeString(b, i, end) : undefined;
    } else if (want === "scalar") {
      out[key as string] = scalarText(b, i, end);
    } else if (want !== undefined) {
      out[key as string] = b[i] === OPEN_BRACE ? readObject(b, i, want) : undefined;
    }
    i = skipSpace(b, end);
    if (b[i] !== COMMA) return out;
    i = skipSpace(b, i + 1);
  }
}

/**
 * The wanted fields of a body that is a JSON object (after an optional UTF-8 byte order mark
 * and whitespace); undefined for anything else.
 */
export function jsonFields(body: Uint8Array, spec: FieldSpec): Fields | undefined {
  let i = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  i = skipSpace(body, i);
  return body[i] === OPEN_BRACE ? readObject(body, i, spec) : undefined;
}

/** A string field of a `jsonFields` result. */
export function stringField(fields: Fields | undefined, name: string): string | undefined {
  const value = fields?.[name];
  return typeof value === "string" ? value : undefined;
}

/** An object field of a `jsonFields` result. */
export function objectField(fields: Fields | undefined, name: string): Fields | undefined {
  const value = fields?.[name];
  return typeof value === "object" ? value : undefined;
}

/**
 * A reader of the string, number or boolean at a path of object members (`["data", "object",
 * "id"]`) of a body that is a JSON object, as scalarText reads it; it answers undefined when
 * the value is absent or of another kind. The spec is built once, for a reader used per capture.
 */
export function jsonScalarReader(path: readonly string[]): (body: Uint8Array) => string | undefined {
  const last = path[path.length - 1];
  if (last === undefined) return () => undefined;
  let spec: FieldSpec = { [last]: "scalar" };
  for (let k = path.length - 2; k >= 0; k -= 1) spec = { [path[k] as string]: spec };
  const parents = path.slice(0, -1);
  return (body) => {
    let fields: Fields | undefined = jsonFields(body, spec);
    for (const name of parents) fields = objectField(fields, name);
    return stringField(fields, last);
  };
}
