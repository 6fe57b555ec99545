import { isUtf8 } from "node:buffer";

/** What a body looks like from its bytes, whatever its Content-Type says (design §12). */
import { BODY_KINDS, type BodyIs, type ContentTypeDiagnosticJson } from "@whc/api-model";
export { BODY_KINDS, type BodyIs };

/** The `contentType` object of an event's diagnostic, as /v1 defines it. */
export type ContentTypeDiagnosis = ContentTypeDiagnosticJson;

/** Only this much of the start of a body is read to tell form, text and binary apart. */
const SNIFF_BYTES = 64 * 1024;

/** Only ever given bytes already checked to be UTF-8. */
const utf8 = new TextDecoder("utf-8");

/** Visible ASCII pairs `key=value&key=value`; a bare key may follow the first pair, as forms allow. */
const FORM = /^[!-%'-<>-~]+=[!-%'-~]*(?:&[!-%'-<>-~]+(?:=[!-%'-~]*)?)*&?$/;

const isSpace = (c: number | undefined) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

let lastKind: ContentTypeDiagnosis = Object.freeze({ declared: null, bodyIs: "empty", mismatch: false });

/**
 * The body's kind against its declared type, as a frozen object shared by every capture that
 * gets the same answer: the last one is kept (a sender repeats its own), so the diagnostic's
 * text of it is written once, not per capture (design §20).
 */
export function bodyKind(declaredContentType: string | undefined, body: Uint8Array): ContentTypeDiagnosis {
  const declared = mediaType(declaredContentType);
  const bodyIs = sniff(body);
  if (lastKind.declared === declared && lastKind.bodyIs === bodyIs) return lastKind;
  lastKind = Object.freeze({ declared, bodyIs, mismatch: contradicts(declared, bodyIs) });
  return lastKind;
}

let lastDeclared: string | undefined;
let lastMediaType: string | null = null;

/** The media type of a Content-Type value; the last one is kept (a sender repeats its own). */
function mediaType(value: string | undefined): string | null {
  if (value !== undefined && value === lastDeclared) return lastMediaType;
  const essence = value?.split(";")[0]?.trim().toLowerCase();
  const type = essence ? essence : null;
  if (value !== undefined) {
    lastDeclared = value;
    lastMediaType = type;
  }
  return type;
}

function sniff(body: Uint8Array): BodyIs {
  if (body.length === 0) return "empty";
  const sample = utf8Prefix(body, SNIFF_BYTES);
  // NUL is valid UTF-8 but no text format uses it: its presence means bytes, not characters.
  if (sample === undefined || sample.includes(0)) return "binary";
  if (looksLikeJson(body)) return "json";
  const text = utf8.decode(sample);
  if (text.trim() === "") return "text";
  return FORM.test(text.trimEnd()) ? "form" : "text";
}

/**
 * The first `max` bytes when they are UTF-8, cut before a character the limit would split;
 * undefined when they are not UTF-8.
 */
function utf8Prefix(body: Uint8Array, max: number): Uint8Array | undefined {
  let end = Math.min(max, body.length);
  // Back off over continuation bytes (10xxxxxx) to the start of the character at the cut.
  for (let i = 0; i < 3 && end < body.length && end > 0 && ((body[end] ?? 0) & 0xc0) === 0x80; i += 1) end -= 1;
  const sample = body.subarray(0, end);
  return isUtf8(sample) ? sample : undefined;
}

function looksLikeJson(body: Uint8Array): boolean {
  // A byte order mark, then whitespace, may precede the value.
  let start = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  while (isSpace(body[start])) start += 1;
  const open = body[start];
  if (open !== 0x7b && open !== 0x5b) return false;
  // Judged by the first and last bytes, never parsed: this runs on every capture, and a parse
  // of a 1.5 KB event alone cost more than the rest of the diagnosis of a good one.
  let end = body.length - 1;
  while (end > start && isSpace(body[end])) end -= 1;
  return body[end] === (open === 0x7b ? 0x7d : 0x5d);
}

/** The kinds each declared family accepts; JSON and forms are text too. */
function acceptedKinds(declared: string | null): readonly BodyIs[] | undefined {
  if (declared === null) return undefined;
  if (declared === "application/json" || declared === "text/json" || declared.endsWith("+json")) return ["json"];
  if (declared === "application/x-www-form-urlencoded") return ["form"];
  if (declared.startsWith("text/")) return ["text", "json", "form"];
  return undefined;
}

function contradicts(declared: string | null, bodyIs: BodyIs): boolean {
  const accepted = acceptedKinds(declared);
  // An empty body has no kind to contradict: senders set Content-Type on empty pings too.
  return accepted !== undefined && bodyIs !== "empty" && !accepted.includes(bodyIs);
}
