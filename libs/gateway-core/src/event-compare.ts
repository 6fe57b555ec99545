import { createHash } from "node:crypto";
import { DIFF_LIMITS, type EventDiffChangeJson, type EventDiffJson } from "@whc/api-model";

/** What two events are compared on (design §19, "Diff"). */
export interface ComparedRequest {
  method: string;
  /** The sub-path and query after the webhook URL, as the detail shows it. */
  path: string;
  headers: Record<string, string[]>;
  /** The stored bytes; undefined when none is stored or it cannot be opened. */
  body: Uint8Array | undefined;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const pointer = (parts: readonly (string | number)[]) => parts.map((p) => `/${String(p).replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");

class Changes {
  readonly list: EventDiffChangeJson[] = [];
  truncated = false;
  constructor(private readonly ignored: readonly string[]) {}
  push(change: EventDiffChangeJson): void {
    if (this.ignored.some((p) => change.path === p || change.path.startsWith(`${p}/`))) return;
    if (this.list.length === DIFF_LIMITS.changes) this.truncated = true;
    else this.list.push(change);
  }
}

/** A query string as name -> values, in order. */
function queryOf(path: string): Record<string, string[]> {
  const cut = path.indexOf("?");
  const out: Record<string, string[]> = {};
  if (cut < 0) return out;
  for (const [name, value] of new URLSearchParams(path.slice(cut + 1))) (out[name] ??= []).push(value);
  return out;
}

/** Header names lower-cased (they are case-insensitive), values in order. */
function headersOf(headers: Record<string, string[]>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, values] of Object.entries(headers)) (out[name.toLowerCase()] ??= []).push(...values);
  return out;
}

/** One value when a name has one, else the list. */
const shown = (values: string[]): Json => (values.length === 1 ? values[0]! : values);

function compareMaps(a: Record<string, string[]>, b: Record<string, string[]>, at: string, out: Changes): void {
  for (const name of Object.keys(a).sort()) {
    const path = pointer([at, name]);
    if (!(name in b)) out.push({ op: "remove", path, from: shown(a[name]!) });
    else if (JSON.stringify(a[name]) !== JSON.stringify(b[name])) out.push({ op: "replace", path, from: shown(a[name]!), to: shown(b[name]!) });
  }
  for (const name of Object.keys(b).sort()) if (!(name in a)) out.push({ op: "add", path: pointer([at, name]), to: shown(b[name]!) });
}

const isObject = (v: Json): v is { [key: string]: Json } => typeof v === "object" && v !== null && !Array.isArray(v);

/** Structural: objects by key, arrays by index; anything else, or a change of kind, is a replace. */
function compareJson(a: Json, b: Json, parts: (string | number)[], out: Changes): void {
  if (isObject(a) && isObject(b)) {
    for (const key of Object.keys(a)) {
      if (!(key in b)) out.push({ op: "remove", path: pointer([...parts, key]), from: a[key] });
      else compareJson(a[key]!, b[key]!, [...parts, key], out);
    }
    for (const key of Object.keys(b)) if (!(key in a)) out.push({ op: "add", path: pointer([...parts, key]), to: b[key] });
    return;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    const common = Math.min(a.length, b.length);
    for (let i = 0; i < common; i += 1) compareJson(a[i]!, b[i]!, [...parts, i], out);
    for (let i = common; i < a.length; i += 1) out.push({ op: "remove", path: pointer([...parts, i]), from: a[i] });
    for (let i = common; i < b.length; i += 1) out.push({ op: "add", path: pointer([...parts, i]), to: b[i] });
    return;
  }
  if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ op: "replace", path: pointer(parts), from: a, to: b });
}

/**
 * By lines, after their longest common subsequence: a line of `from` not kept is removed (at its
 * index in `from`), a line of `to` not kept is added (at its index in `to`); a removal and an
 * addition side by side read as one replace. Past DIFF_LIMITS.textLines lines a side, the whole
 * text is one replace.
 */
function compareText(a: string, b: string, out: Changes): void {
  const x = a.split("\n");
  const y = b.split("\n");
  if (x.length > DIFF_LIMITS.textLines || y.length > DIFF_LIMITS.textLines) {
    out.push({ op: "replace", path: "/body", from: a, to: b });
    return;
  }
  // lcs[i][j]: the common subsequence's length of x[i..] and y[j..].
  const lcs = Array.from({ length: x.length + 1 }, () => new Uint16Array(y.length + 1));
  for (let i = x.length - 1; i >= 0; i -= 1) {
    for (let j = y.length - 1; j >= 0; j -= 1) lcs[i]![j] = x[i] === y[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  }
  let i = 0;
  let j = 0;
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && x[i] === y[j]) {
      i += 1;
      j += 1;
    } else if (i < x.length && j < y.length && lcs[i + 1]![j] === lcs[i]![j + 1]) {
      out.push({ op: "replace", path: pointer(["body", i]), from: x[i], to: y[j] });
      i += 1;
      j += 1;
    } else if (j >= y.length || (i < x.length && lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) {
      out.push({ op: "remove", path: pointer(["body", i]), from: x[i] });
      i += 1;
    } else {
      out.push({ op: "add", path: pointer(["body", j]), to: y[j] });
      j += 1;
    }
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function textOf(body: Uint8Array | undefined): string | undefined {
  if (body === undefined) return undefined;
  try {
    return utf8.decode(body);
  } catch {
    return undefined;
  }
}

function jsonOf(text: string | undefined): { value: Json } | undefined {
  if (text === undefined || text.trim() === "") return undefined;
  try {
    return { value: JSON.parse(text) as Json };
  } catch {
    return undefined;
  }
}

const fingerprint = (body: Uint8Array | undefined) =>
  body === undefined ? null : { size: body.length, sha256: createHash("sha256").update(body).digest("hex") };

function compareBodies(a: Uint8Array | undefined, b: Uint8Array | undefined, out: Changes): EventDiffJson["bodyKind"] {
  const [ta, tb] = [textOf(a), textOf(b)];
  const [ja, jb] = [jsonOf(ta), jsonOf(tb)];
  if (ja && jb) {
    compareJson(ja.value, jb.value, ["body"], out);
    return "json";
  }
  if (ta !== undefined && tb !== undefined) {
    if (ta !== tb) compareText(ta, tb, out);
    return "text";
  }
  const [fa, fb] = [fingerprint(a), fingerprint(b)];
  if (JSON.stringify(fa) !== JSON.stringify(fb)) out.push({ op: "replace", path: "/body", from: fa, to: fb });
  return "binary";
}

/** `ignore`'s dotted paths as the pointers they cover (header names lower-cased). */
export function ignoredPointers(dotted: readonly string[]): string[] {
  return dotted.map((p) => {
    const parts = p.split(".");
    if (parts[0] === "headers" && parts[1] !== undefined) parts[1] = parts[1].toLowerCase();
    return pointer(parts);
  });
}

/** The changes from `a` (the event of the path) to `b` (`with`), as the diff route answers them. */
export function compareRequests(a: ComparedRequest, b: ComparedRequest, ignore: readonly string[] = []): EventDiffJson {
  const out = new Changes(ignoredPointers(ignore));
  if (a.method !== b.method) out.push({ op: "replace", path: "/method", from: a.method, to: b.method });
  const [pa, pb] = [a.path.replace(/\?.*$/s, ""), b.path.replace(/\?.*$/s, "")];
  if (pa !== pb) out.push({ op: "replace", path: "/path", from: pa, to: pb });
  compareMaps(queryOf(a.path), queryOf(b.path), "query", out);
  compareMaps(headersOf(a.headers), headersOf(b.headers), "headers", out);
  const bodyKind = compareBodies(a.body, b.body, out);
  return { same: out.list.length === 0 && !out.truncated, bodyKind, changes: out.list, truncated: out.truncated };
}
