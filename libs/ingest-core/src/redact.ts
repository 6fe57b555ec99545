import { isUtf8 } from "node:buffer";
import { compilePattern, parseJsonPath, REDACTED, type JsonPathStep, type RedactionCounts, type RedactSettings } from "@whc/api-model";
import type { HeaderPair } from "@whc/signatures";

/**
 * Redaction (design §16, ADR 0045): an endpoint's `redact` settings compiled once per endpoint
 * lookup, and applied to a capture after its signature was judged and before it is sealed and
 * indexed. Header values and pattern matches become `[redacted]`, a JSON value at a path the
 * string `"[redacted]"`; every other byte of the body stays as it came (values are spliced out
 * of the raw bytes, never re-serialised).
 */
export interface Redactor {
  /** Header names, lower-cased. */
  headers: ReadonlySet<string>;
  paths: readonly (readonly JsonPathStep[])[];
  patterns: readonly RegExp[];
}

export function compileRedactor(settings: RedactSettings | undefined): Redactor | undefined {
  if (!settings) return undefined;
  const paths = (settings.jsonPaths ?? []).map(parseJsonPath).filter((p): p is JsonPathStep[] => p !== undefined);
  return {
    headers: new Set((settings.headers ?? []).map((h) => h.toLowerCase())),
    paths,
    patterns: (settings.patterns ?? []).map(compilePattern),
  };
}

export interface Redacted {
  headers: readonly HeaderPair[];
  /** The body as it is stored; the same Buffer when nothing in it was replaced. */
  body: Buffer | undefined;
  counts: RedactionCounts;
}

/** The capture's headers and body with what the endpoint redacts replaced, and how many of each. */
export function redact(r: Redactor, headers: readonly HeaderPair[], body: Buffer | undefined): Redacted {
  const counts: RedactionCounts = { headers: 0, jsonPaths: 0, patterns: 0 };
  let outHeaders = headers;
  if (r.headers.size > 0) {
    outHeaders = headers.map(([name, value]): HeaderPair => {
      if (!r.headers.has(name.toLowerCase())) return [name, value];
      counts.headers += 1;
      return [name, REDACTED];
    });
  }
  let out = body;
  if (out && out.length > 0 && r.paths.length > 0) {
    const spans = jsonValueSpans(out, r.paths);
    counts.jsonPaths = spans.length;
    if (spans.length > 0) out = splice(out, spans, QUOTED_REDACTED);
  }
  if (out && out.length > 0 && r.patterns.length > 0 && isUtf8(out)) {
    let text = out.toString("utf8");
    let replaced = 0;
    // An empty match replaces nothing: a pattern that can match nothing must not fill the body.
    const replace = (match: string) => (match.length === 0 ? match : (replaced += 1, REDACTED));
    for (const pattern of r.patterns) text = text.replace(pattern, replace);
    counts.patterns = replaced;
    // Valid UTF-8 decodes and encodes back to the same bytes: only the matches change.
    if (replaced > 0) out = Buffer.from(text, "utf8");
  }
  return { headers: outHeaders, body: out, counts };
}

/** Whether anything was redacted. */
export function redactedAny(c: RedactionCounts): boolean {
  return c.headers + c.jsonPaths + c.patterns > 0;
}

const QUOTED_REDACTED = Buffer.from(JSON.stringify(REDACTED), "utf8");

/** The bytes with each [start, end) span (in order, not overlapping) replaced by `by`. */
function splice(bytes: Buffer, spans: readonly (readonly [number, number])[], by: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (const [start, end] of spans) {
    parts.push(bytes.subarray(at, start), by);
    at = end;
  }
  parts.push(bytes.subarray(at));
  return Buffer.concat(parts);
}

// ---------------------------------------------------------------------------------------------
// Where the values at the paths are in the raw bytes of a JSON document.

const enum Ch {
  Tab = 0x09,
  Lf = 0x0a,
  Cr = 0x0d,
  Space = 0x20,
  Quote = 0x22,
  Comma = 0x2c,
  Colon = 0x3a,
  OpenBracket = 0x5b,
  Backslash = 0x5c,
  CloseBracket = 0x5d,
  OpenBrace = 0x7b,
  CloseBrace = 0x7d,
}

class NotJson extends Error {}

/** A path and how many of its steps the current value has matched. */
type State = readonly [path: readonly JsonPathStep[], matched: number];

/**
 * The [start, end) byte spans of the values the paths select, in document order. A value that
 * a path selects whole is not looked into. A document that turns out not to be JSON (cut off,
 * binary, compressed) gives the spans found before the bytes stopped being JSON: they are values
 * all the same.
 */
export function jsonValueSpans(bytes: Buffer, paths: readonly (readonly JsonPathStep[])[]): [number, number][] {
  const scanner = new JsonScanner(bytes);
  // A UTF-8 byte order mark before the document, which JSON does not allow but senders send.
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) scanner.at = 3;
  try {
    scanner.value(paths.map((p): State => [p, 0]));
  } catch (err) {
    if (!(err instanceof NotJson)) throw err;
  }
  return scanner.spans;
}

class JsonScanner {
  at = 0;
  readonly spans: [number, number][] = [];
  constructor(readonly b: Buffer) {}

  fail(): never {
    throw new NotJson();
  }

  space(): void {
    const b = this.b;
    for (;;) {
      const c = b[this.at];
      if (c !== Ch.Space && c !== Ch.Lf && c !== Ch.Cr && c !== Ch.Tab) return;
      this.at += 1;
    }
  }

  /** One value, with the states of the paths that reach it. */
  value(states: readonly State[]): void {
    this.space();
    const start = this.at;
    if (states.some(([path, matched]) => matched === path.length)) {
      this.skip();
      this.spans.push([start, this.at]);
      return;
    }
    if (states.length === 0) return this.skip();
    const c = this.b[this.at];
    if (c === Ch.OpenBrace) return this.object(states);
    if (c === Ch.OpenBracket) return this.array(states);
    this.skip();
  }

  object(states: readonly State[]): void {
    this.at += 1;
    this.space();
    if (this.b[this.at] === Ch.CloseBrace) {
      this.at += 1;
      return;
    }
    for (;;) {
      this.space();
      const key = this.key();
      this.space();
      if (this.b[this.at] !== Ch.Colon) this.fail();
      this.at += 1;
      this.value(advance(states, (step) => ("any" in step ? true : "key" in step && step.key === key)));
      this.space();
      const c = this.b[this.at];
      this.at += 1;
      if (c === Ch.CloseBrace) return;
      if (c !== Ch.Comma) this.fail();
    }
  }

  array(states: readonly State[]): void {
    this.at += 1;
    this.space();
    if (this.b[this.at] === Ch.CloseBracket) {
      this.at += 1;
      return;
    }
    for (let index = 0; ; index += 1) {
      this.value(advance(states, (step) => ("any" in step ? true : "index" in step && step.index === index)));
      this.space();
      const c = this.b[this.at];
      this.at += 1;
      if (c === Ch.CloseBracket) return;
      if (c !== Ch.Comma) this.fail();
    }
  }

  /** A member's name, decoded. */
  key(): string {
    if (this.b[this.at] !== Ch.Quote) this.fail();
    const start = this.at;
    const escaped = this.string();
    const raw = this.b.toString("utf8", start + 1, this.at - 1);
    if (!escaped) return raw;
    try {
      return JSON.parse(this.b.toString("utf8", start, this.at)) as string;
    } catch {
      return this.fail();
    }
  }

  /** Past a string (at its opening quote); whether it held an escape. Quotes are found natively, not byte by byte. */
  string(): boolean {
    const b = this.b;
    const start = this.at + 1;
    let quote = start - 1;
    for (;;) {
      quote = b.indexOf(Ch.Quote, quote + 1);
      if (quote < 0) this.fail();
      // A quote after an odd run of backslashes is escaped.
      let slashes = 0;
      while (b[quote - 1 - slashes] === Ch.Backslash) slashes += 1;
      if (slashes % 2 === 0) break;
    }
    this.at = quote + 1;
    const slash = b.indexOf(Ch.Backslash, start);
    return slash >= 0 && slash < quote;
  }

  /**
   * Past one value of any kind, without recursion (a body may nest deeper than the stack): a
   * container is passed by counting its brackets and braces, strings jumped over whole; what
   * is inside is not checked further (nothing in it is redacted).
   */
  skip(): void {
    const b = this.b;
    this.space();
    const first = b[this.at];
    if (first === Ch.Quote) return void this.string();
    if (first !== Ch.OpenBrace && first !== Ch.OpenBracket) return this.scalar();
    let depth = 0;
    do {
      const c = b[this.at];
      if (c === undefined) this.fail();
      if (c === Ch.Quote) {
        this.string();
        continue;
      }
      if (c === Ch.OpenBrace || c === Ch.OpenBracket) depth += 1;
      else if (c === Ch.CloseBrace || c === Ch.CloseBracket) depth -= 1;
      this.at += 1;
    } while (depth > 0);
  }

  /** Past a number, true, false or null. */
  scalar(): void {
    const b = this.b;
    const start = this.at;
    for (;;) {
      const c = b[this.at];
      if (c === undefined || c === Ch.Comma || c === Ch.CloseBrace || c === Ch.CloseBracket || c === Ch.Colon || c === Ch.Quote) break;
      if (c === Ch.Space || c === Ch.Lf || c === Ch.Cr || c === Ch.Tab || c === Ch.OpenBrace || c === Ch.OpenBracket) break;
      this.at += 1;
    }
    if (this.at === start || !SCALAR.test(b.toString("latin1", start, this.at))) this.fail();
  }
}

const SCALAR = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)$/;

/** The states that go on into a child the step test accepts, one step further. */
function advance(states: readonly State[], accepts: (step: JsonPathStep) => boolean): State[] {
  const next: State[] = [];
  for (const [path, matched] of states) {
    const step = path[matched];
    if (step !== undefined && accepts(step)) next.push([path, matched + 1]);
  }
  return next;
}
