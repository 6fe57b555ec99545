import type { ReplayEdits } from "@whc/contracts";
import { AppError, validationFailed } from "@whc/errors";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Header = { name: string; value: string };

export interface EditedRequest {
  headers: Header[];
  body: Uint8Array | undefined;
  edited: boolean;
}

const isObject = (v: Json | undefined): v is { [key: string]: Json } => typeof v === "object" && v !== null && !Array.isArray(v);

/** RFC 7386. */
export function mergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) return patch;
  const out: { [key: string]: Json } = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key] ?? null, value);
  }
  return out;
}

const badPatch = (message: string) => validationFailed("edits.jsonPatch", "format", `edits.jsonPatch: ${message}`);

function unescape(token: string): string {
  return token.replace(/~1/g, "/").replace(/~0/g, "~");
}

function tokens(pointer: unknown): string[] {
  if (typeof pointer !== "string" || (pointer !== "" && !pointer.startsWith("/"))) throw badPatch(`${JSON.stringify(pointer)} is not a JSON Pointer`);
  return pointer === "" ? [] : pointer.slice(1).split("/").map(unescape);
}

/** The container and key a pointer's last token names in `doc`. */
function parentOf(doc: Json, path: string[], pointer: string): { parent: Json; key: string } {
  let node: Json = doc;
  for (const t of path.slice(0, -1)) {
    const next: Json | undefined = Array.isArray(node) ? node[Number(t)] : isObject(node) ? node[t] : undefined;
    if (next === undefined) throw badPatch(`${pointer} does not exist`);
    node = next;
  }
  return { parent: node, key: path.at(-1)! };
}

function get(doc: Json, pointer: string): Json {
  let node: Json | undefined = doc;
  for (const t of tokens(pointer)) node = Array.isArray(node) ? node[Number(t)] : isObject(node) ? node[t] : undefined;
  if (node === undefined) throw badPatch(`${pointer} does not exist`);
  return node;
}

function remove(doc: Json, pointer: string): Json {
  const path = tokens(pointer);
  if (path.length === 0) throw badPatch("cannot remove the whole document");
  const { parent, key } = parentOf(doc, path, pointer);
  if (Array.isArray(parent) && /^\d+$/.test(key) && Number(key) < parent.length) return parent.splice(Number(key), 1)[0]!;
  if (isObject(parent) && key in parent) {
    const old = parent[key]!;
    delete parent[key];
    return old;
  }
  throw badPatch(`${pointer} does not exist`);
}

function add(doc: Json, pointer: string, value: Json): Json {
  const path = tokens(pointer);
  if (path.length === 0) return value;
  const { parent, key } = parentOf(doc, path, pointer);
  if (Array.isArray(parent)) {
    const i = key === "-" ? parent.length : Number(key);
    if (!/^(\d+|-)$/.test(key) || i > parent.length) throw badPatch(`${pointer} is out of the array`);
    parent.splice(i, 0, value);
  } else if (isObject(parent)) parent[key] = value;
  else throw badPatch(`${pointer}'s parent is not an object or array`);
  return doc;
}

/** RFC 6902: add, remove, replace, move, copy, test. */
export function jsonPatch(doc: Json, ops: Json): Json {
  if (!Array.isArray(ops)) throw badPatch("must be an array of operations");
  let out: Json = structuredClone(doc);
  for (const op of ops) {
    if (!isObject(op) || typeof op.path !== "string") throw badPatch("each operation needs op and path");
    const path = op.path;
    switch (op.op) {
      case "add":
        if (!("value" in op)) throw badPatch(`add ${path} needs a value`);
        out = add(out, path, op.value!);
        break;
      case "remove":
        remove(out, path);
        break;
      case "replace":
        if (!("value" in op)) throw badPatch(`replace ${path} needs a value`);
        if (tokens(path).length === 0) out = op.value!;
        else {
          remove(out, path);
          out = add(out, path, op.value!);
        }
        break;
      case "move":
      case "copy": {
        const from = typeof op.from === "string" ? op.from : "";
        const value = op.op === "move" ? remove(out, from) : structuredClone(get(out, from));
        out = add(out, path, value);
        break;
      }
      case "test":
        if (JSON.stringify(get(out, path)) !== JSON.stringify(op.value)) throw new AppError("conflict", `edits.jsonPatch: test of ${path} failed`);
        break;
      default:
        throw badPatch(`unknown op ${JSON.stringify(op.op)}`);
    }
  }
  return out;
}

function parseJson(text: string, field: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch {
    throw validationFailed(field, "format", `${field}: not JSON`);
  }
}

/** The captured body as JSON, for a patch: refused (409) when it is not stored whole or is not JSON. */
function capturedJson(body: Uint8Array | undefined, truncated: boolean): Json {
  if (body === undefined || truncated) throw new AppError("conflict", "the event's body is not stored whole: a patch needs all of it");
  try {
    return JSON.parse(Buffer.from(body).toString("utf8")) as Json;
  } catch {
    throw new AppError("conflict", "the event's body is not JSON: a patch needs a JSON body");
  }
}

/**
 * The captured request with the edits applied (design §19): header sets replace every value of
 * the name, removals drop it, then the one body edit. A patched body is written as compact JSON.
 */
export function applyEdits(headers: readonly Header[], body: Uint8Array | undefined, truncated: boolean, edits: ReplayEdits | undefined): EditedRequest {
  if (!edits) return { headers: [...headers], body, edited: false };
  const set = Object.entries(edits.setHeaders);
  const dropped = new Set([...edits.removeHeaders, ...set.map(([name]) => name)].map((n) => n.toLowerCase()));
  const out = headers.filter((h) => !dropped.has(h.name.toLowerCase())).concat(set.map(([name, value]) => ({ name, value })));
  const edit = edits.body;
  let edited = set.length > 0 || edits.removeHeaders.length > 0;
  let newBody = body;
  if (edit.case === "bodyBytes") newBody = edit.value;
  else if (edit.case === "jsonMergePatch") newBody = Buffer.from(JSON.stringify(mergePatch(capturedJson(body, truncated), parseJson(edit.value, "edits.jsonMergePatch"))));
  else if (edit.case === "jsonPatch") newBody = Buffer.from(JSON.stringify(jsonPatch(capturedJson(body, truncated), parseJson(edit.value, "edits.jsonPatch"))));
  if (edit.case !== undefined) edited = true;
  return { headers: out, body: newBody, edited };
}
