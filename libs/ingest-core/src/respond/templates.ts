import { isoTime } from "@whc/api-model/present";
import { header, type HeaderPair } from "@whc/signatures";

/**
 * Templates in a configured answer's body and header values (design §10):
 *
 *   {{eventId}}  {{receivedAt}}  {{query.NAME}}  {{header.NAME}}  {{body.a.b.0.c}}
 *
 * Spaces inside the braces are allowed (`{{ eventId }}`). A placeholder whose value is missing
 * renders empty. Anything else between double braces is left exactly as written: a body may
 * legitimately carry another tool's `{{...}}` text, and a typo shows up in the answer instead of
 * vanishing. Nothing is evaluated: a placeholder only reads the request being answered, by
 * looking a name up, never through property access on live objects (no env, no files, no
 * prototypes).
 */

export interface TemplateContext {
  eventId: string;
  /** The commit time the catalog gave the capture. */
  receivedAtMs: number;
  /** The sub-path after the webhookUrl with its query, as received. */
  path: string;
  headers: readonly HeaderPair[];
  /** The whole body as received (empty when it was cut off). */
  body: Uint8Array;
}

/**
 * A value a placeholder stands for. `text` is Unicode text (a decoded query value, a JSON
 * string); `bytes` is a header value as Node hands it over: one character per byte received.
 * The two are written out differently so each reaches the sender as the bytes it came from.
 */
export type TemplateValue = { kind: "text"; value: string } | { kind: "bytes"; value: string };

/** JSON bodies larger than this are not parsed for `{{body.…}}` (they render empty): parsing is on ingest's event loop. */
export const MAX_TEMPLATE_JSON_BYTES = 1024 * 1024;
/** A rendered body is cut here, so a few placeholders cannot multiply a large request into a huge answer. */
export const MAX_RENDERED_BODY_BYTES = 1024 * 1024;
/** A rendered header value is cut here (the configured value's own limit). */
export const MAX_RENDERED_HEADER_CHARS = 4096;

const PLACEHOLDER = /\{\{\s*([^{}\s]+)\s*\}\}/g;
const HEADER_NAME = /^header\.([!#$%&'*+.^_`|~0-9A-Za-z-]{1,100})$/;
const ARRAY_INDEX = /^(?:0|[1-9][0-9]{0,8})$/;
const NOT_PARSED = Symbol("not parsed");
const EMPTY: TemplateValue = { kind: "text", value: "" };

/** One request's placeholder values, each read on first use; the JSON body is parsed at most once. */
export interface TemplateScope {
  /** The value of a placeholder's name, "" when missing; undefined when the name is not a placeholder. */
  lookup(name: string): TemplateValue | undefined;
}

export function createTemplateScope(ctx: TemplateContext): TemplateScope {
  let query: URLSearchParams | undefined;
  let json: unknown = NOT_PARSED;
  const queryOf = () => (query ??= new URLSearchParams(ctx.path.includes("?") ? ctx.path.slice(ctx.path.indexOf("?") + 1) : ""));
  const jsonOf = () => (json === NOT_PARSED ? (json = parseJsonBody(ctx.body)) : json);
  return {
    lookup(name) {
      if (name === "eventId") return text(ctx.eventId);
      if (name === "receivedAt") return text(isoTime(ctx.receivedAtMs));
      if (name.startsWith("query.") && name.length > 6) return text(queryOf().get(name.slice(6)) ?? "");
      const headerName = HEADER_NAME.exec(name)?.[1];
      if (headerName !== undefined) return { kind: "bytes", value: header(ctx.headers, headerName) ?? "" };
      const bodyPath = name.startsWith("body.") ? name.slice(5).split(".") : [];
      if (bodyPath.length > 0 && !bodyPath.includes("")) return bodyValue(jsonOf, bodyPath);
      return undefined;
    },
  };
}

function text(value: string): TemplateValue {
  return { kind: "text", value };
}

/** The body as JSON, or undefined when it is not JSON (or too large to parse here). */
function parseJsonBody(body: Uint8Array): unknown {
  if (body.length === 0 || body.length > MAX_TEMPLATE_JSON_BYTES) return undefined;
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
  } catch {
    return undefined;
  }
}

function bodyValue(jsonOf: () => unknown, path: readonly string[]): TemplateValue {
  const found = walk(jsonOf(), path);
  if (found === undefined) return EMPTY;
  return text(typeof found === "string" ? found : JSON.stringify(found));
}

/**
 * Steps down parsed JSON by own properties and array indexes only: `__proto__`, `constructor`,
 * `length` or `toString` find nothing unless the sender's JSON itself has such a key, and then
 * it is the sender's own data.
 */
function walk(root: unknown, path: readonly string[]): unknown {
  let at = root;
  for (const segment of path) {
    if (Array.isArray(at)) {
      if (!ARRAY_INDEX.test(segment)) return undefined;
      at = at[Number(segment)];
    } else if (at !== null && typeof at === "object" && Object.hasOwn(at, segment)) {
      at = (at as Record<string, unknown>)[segment];
    } else {
      return undefined;
    }
  }
  return at;
}

/**
 * Splits a template into literal runs and placeholder values, in order. Callbacks rather than a
 * string so each output (bytes for a body, a latin1 line for a header) encodes every part its own way.
 */
function expand(template: string, scope: TemplateScope, literal: (s: string) => void, value: (v: TemplateValue) => void): void {
  let last = 0;
  for (const match of template.matchAll(PLACEHOLDER)) {
    const found = scope.lookup(match[1] as string);
    if (found === undefined) continue; // not a placeholder: stays in the literal run
    literal(template.slice(last, match.index));
    value(found);
    last = match.index + match[0].length;
  }
  literal(template.slice(last));
}

/**
 * A body: literal text as UTF-8, text values as UTF-8, header values as the bytes that arrived.
 * Values are kept as they are (no escaping): the user chose where they go.
 */
export function renderBody(template: string, scope: TemplateScope): Uint8Array {
  const parts: Buffer[] = [];
  let size = 0;
  const push = (part: Buffer) => {
    if (size >= MAX_RENDERED_BODY_BYTES) return;
    parts.push(part);
    size += part.length;
  };
  expand(
    template,
    scope,
    (literal) => push(Buffer.from(literal, "utf8")),
    (v) => push(Buffer.from(v.value, v.kind === "bytes" ? "latin1" : "utf8")),
  );
  const whole = Buffer.concat(parts);
  return whole.length > MAX_RENDERED_BODY_BYTES ? whole.subarray(0, MAX_RENDERED_BODY_BYTES) : whole;
}

/** C0 controls (CR, LF, NUL, tab...), DEL and the C1 controls: none may come out of a substituted text value. */
const TEXT_CONTROLS = /\p{Cc}/gu;
const ABOVE_LATIN1 = /[\u{100}-\u{10FFFF}]+/gu;

/**
 * Without C0 controls and DEL (the tab kept on request). In a received header value 0x80-0xff
 * are bytes, often of UTF-8 text, not C1 controls, so they stay.
 */
function withoutByteControls(s: string, keepTab: boolean): string {
  let out = "";
  for (let i = 0; i < s.length; i += 1) {
    const c = s.charCodeAt(i);
    if ((c < 0x20 && !(keepTab && c === 0x09)) || c === 0x7f) continue;
    out += s[i];
  }
  return out;
}

/** Characters as their UTF-8 bytes, one character per byte: how Node's latin1 header writing sends UTF-8. */
function asUtf8Bytes(s: string): string {
  return Buffer.from(s, "utf8").toString("latin1");
}

/**
 * A substituted value made safe for a header line: no control character survives (so no value
 * can end the line and start another header), and every character is one byte.
 *
 * Text values are sent as UTF-8 entirely, not only above U+00FF: encoding just the characters
 * Node cannot write would send "é☕" as a latin1 é followed by UTF-8 ☕, which no client decodes.
 * Received header values are already one character per byte and go back out as those bytes.
 */
export function headerSafeValue(v: TemplateValue): string {
  if (v.kind === "bytes") return withoutByteControls(v.value, false).replace(ABOVE_LATIN1, asUtf8Bytes);
  return asUtf8Bytes(v.value.replace(TEXT_CONTROLS, ""));
}

/**
 * Literal text was validated when the configuration was set; it is cleaned again all the same
 * (keeping the tab the schema allows), so a configuration stored by an older, laxer version
 * cannot make Node throw on the answer or split a header line.
 */
function cleanLiteral(literal: string): string {
  return withoutByteControls(literal, true).replace(ABOVE_LATIN1, asUtf8Bytes);
}

/** A header value: substituted values made safe, the result at most MAX_RENDERED_HEADER_CHARS. */
export function renderHeaderValue(template: string, scope: TemplateScope): string {
  let out = "";
  expand(
    template,
    scope,
    (literal) => (out += cleanLiteral(literal)),
    (v) => (out += headerSafeValue(v)),
  );
  return out.length > MAX_RENDERED_HEADER_CHARS ? out.slice(0, MAX_RENDERED_HEADER_CHARS) : out;
}
