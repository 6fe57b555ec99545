import type { JsonValue, SampleBody } from "./sample.js";

/** Limits of a trigger's `set`: each is checked before anything is written. */
export const SET_LIMITS = Object.freeze({
  entries: 50,
  pathLength: 200,
  segments: 16,
  /** A form field's value, in characters. */
  formValueLength: 4096,
});

/** Why a `set` entry was refused, in the API's validation reasons. */
export type SetRefusal = { path: string; reason: "length" | "format" | "type" | "range" | "unknown"; detail: string };

/** Segments that would reach an object's prototype instead of a field of the document. */
const FORBIDDEN = new Set(["__proto__", "prototype", "constructor"]);

type JsonObject = { [key: string]: JsonValue };

const isObject = (v: JsonValue | undefined): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

/** A dotted path's segments, or the refusal of a path that is empty, too long or names a prototype. */
function segmentsOf(path: string): string[] | SetRefusal {
  if (path.length === 0 || path.length > SET_LIMITS.pathLength) {
    return { path, reason: "length", detail: `a path has 1 to ${SET_LIMITS.pathLength} characters` };
  }
  const segments = path.split(".");
  if (segments.length > SET_LIMITS.segments) return { path, reason: "length", detail: `a path has at most ${SET_LIMITS.segments} segments` };
  if (segments.some((s) => s.length === 0)) return { path, reason: "format", detail: "a path is dot-separated names, none empty" };
  if (segments.some((s) => FORBIDDEN.has(s))) return { path, reason: "format", detail: "__proto__, prototype and constructor cannot be set" };
  return segments;
}

/**
 * Writes `value` at a dotted path of a JSON document: `data.object.amount`, array elements by
 * index (`items.0.price`; the index may be the array's length, which appends). Missing object
 * fields on the way are created as objects; stepping into a string, number, boolean or null,
 * or past an array's end, is refused. The document is changed in place.
 */
function setJson(doc: JsonValue, path: string, segments: string[], value: JsonValue): SetRefusal | undefined {
  let node: JsonValue = doc;
  for (let i = 0; i < segments.length; i += 1) {
    const key = segments[i] as string;
    const last = i === segments.length - 1;
    if (Array.isArray(node)) {
      if (!/^(0|[1-9]\d{0,5})$/.test(key) || Number(key) > node.length) {
        return { path, reason: "range", detail: `${segments.slice(0, i).join(".") || "the body"} is an array of ${node.length}: use an index up to ${node.length}` };
      }
      const index = Number(key);
      if (last) node[index] = value;
      else node = node[index] ??= {};
    } else if (isObject(node)) {
      if (last) node[key] = value;
      else node = Object.hasOwn(node, key) ? (node[key] as JsonValue) : (node[key] = {});
    } else {
      return { path, reason: "type", detail: `${segments.slice(0, i).join(".") || "the body"} is not an object or array` };
    }
  }
  return undefined;
}

/** A form field's value: a string, or a number or boolean written as text. */
function formValue(path: string, value: JsonValue): string | SetRefusal {
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (typeof value !== "string") return { path, reason: "type", detail: "a form field's value is a string, number or boolean" };
  if (value.length > SET_LIMITS.formValueLength) return { path, reason: "length", detail: `a form value has at most ${SET_LIMITS.formValueLength} characters` };
  return value;
}

/** Sets the first field of that name, or adds it at the end. */
function setForm(form: [string, string][], name: string, value: string): void {
  const at = form.findIndex(([n]) => n === name);
  if (at >= 0) form[at] = [name, value];
  else form.push([name, value]);
}

/**
 * The body with every `set` entry written: dotted paths into a JSON body, field names of a form
 * body. Entries apply in order; the first refused one is returned and nothing is half-applied
 * for the caller (the body is a fresh copy either way).
 */
export function applySet(body: SampleBody, set: Readonly<Record<string, JsonValue>>): { body: SampleBody } | { refused: SetRefusal } {
  const entries = Object.entries(set);
  if (entries.length > SET_LIMITS.entries) {
    return { refused: { path: "", reason: "length", detail: `at most ${SET_LIMITS.entries} fields can be set` } };
  }
  if ("form" in body) {
    const form = body.form.map(([n, v]): [string, string] => [n, v]);
    for (const [path, value] of entries) {
      if (path.length === 0 || path.length > SET_LIMITS.pathLength) {
        return { refused: { path, reason: "length", detail: `a field name has 1 to ${SET_LIMITS.pathLength} characters` } };
      }
      const text = formValue(path, value);
      if (typeof text !== "string") return { refused: text };
      setForm(form, path, text);
    }
    return { body: { form } };
  }
  const json = structuredClone(body.json);
  for (const [path, value] of entries) {
    const segments = segmentsOf(path);
    if (!Array.isArray(segments)) return { refused: segments };
    const refused = setJson(json, path, segments, structuredClone(value));
    if (refused) return { refused };
  }
  return { body: { json } };
}
