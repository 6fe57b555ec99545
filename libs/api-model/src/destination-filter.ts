import { patternProblem } from "./redaction.js";
import type { FieldReason } from "./problems.js";

/**
 * A destination's filter (design §17): a MongoDB-style query document over a capture's view
 * (`method`, `path`, `query`, `headers`, `body`, `eventType`, `provider`, `verification`;
 * @whc/routing builds the view and evaluates it with mingo). Checked here, once, for the
 * gateway, the CLI and the dashboard alike: only the operators below, at most 16 KiB of JSON
 * and 10 levels deep, each operator given what it takes, and a `$regex` bounded as redaction's
 * patterns are (ADR 0045), since ingest runs it on every capture of the endpoint.
 */

export const FILTER_OPERATORS = ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists", "$regex", "$and", "$or", "$nor", "$not", "$elemMatch", "$size"] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];
export const MAX_FILTER_BYTES = 16 * 1024;
export const MAX_FILTER_DEPTH = 10;
/** The fields of the capture's view, the first step of a filter's field path. */
export const FILTER_VIEW_FIELDS = ["method", "path", "query", "headers", "body", "eventType", "provider", "verification"] as const;

/** What is wrong with a filter: where (steps below the filter itself), why, and in words. */
export interface FilterProblem {
  path: string[];
  reason: FieldReason;
  message: string;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const LOGICAL = new Set(["$and", "$or", "$nor"]);
const OPERATORS: ReadonlySet<string> = new Set(FILTER_OPERATORS);
const REGEX_OPTIONS = /^[imsu]*$/;

class Refused extends Error {
  constructor(
    readonly path: string[],
    readonly reason: FieldReason,
    message: string,
  ) {
    super(message);
  }
}

const isObject = (v: unknown): v is Record<string, Json> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Levels of objects and arrays: a scalar is 0, `{}` is 1. */
function depthOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(depthOf));
  if (isObject(value)) return 1 + Math.max(0, ...Object.values(value).map(depthOf));
  return 0;
}

function utf8Length(text: string): number {
  return new TextEncoder().encode(text).length;
}

/** An operator's name: one of the list, or refused as unsupported (`$where`, `$expr`...). */
function requireKnown(op: string, path: string[]): void {
  if (!OPERATORS.has(op)) throw new Refused([...path, op], "unsupported_operator", `${op} is not a filter operator (${FILTER_OPERATORS.join(" ")})`);
}

/** A query document: field paths to conditions, and $and/$or/$nor of query documents. */
function checkQuery(doc: unknown, path: string[]): void {
  if (!isObject(doc)) throw new Refused(path, "type", "a query is an object");
  for (const [key, value] of Object.entries(doc)) {
    const at = [...path, key];
    if (key.startsWith("$")) {
      requireKnown(key, path);
      if (!LOGICAL.has(key)) throw new Refused(at, "format", `${key} applies to a field, not to the whole document`);
      if (!Array.isArray(value) || value.length === 0) throw new Refused(at, "type", `${key} takes a non-empty array of queries`);
      value.forEach((q, i) => checkQuery(q, [...at, String(i)]));
    } else {
      if (key === "" || key.length > 200) throw new Refused(at, "length", "a field path has 1 to 200 characters");
      if (key.split(".").includes("__proto__")) throw new Refused(at, "format", "a field path may not name __proto__");
      checkCondition(value, at);
    }
  }
}

/** A field's condition: a value it equals, or an object of operators. */
function checkCondition(value: unknown, path: string[]): void {
  if (!isObject(value)) return;
  const keys = Object.keys(value);
  const operators = keys.filter((k) => k.startsWith("$"));
  if (operators.length === 0) return;
  if (operators.length !== keys.length) throw new Refused(path, "format", "an object of operators holds operators only");
  for (const op of keys) {
    if (op === "$options") {
      if (!("$regex" in value)) throw new Refused([...path, op], "format", "$options goes with $regex");
      if (typeof value.$options !== "string" || !REGEX_OPTIONS.test(value.$options)) throw new Refused([...path, op], "format", "$options is a string of i, m, s and u");
      continue;
    }
    requireKnown(op, path);
    checkOperator(op as FilterOperator, value[op], [...path, op]);
  }
}

function checkOperator(op: FilterOperator, arg: unknown, path: string[]): void {
  switch (op) {
    case "$in":
    case "$nin":
      if (!Array.isArray(arg)) throw new Refused(path, "type", `${op} takes an array`);
      return;
    case "$exists":
      if (typeof arg !== "boolean") throw new Refused(path, "type", "$exists takes true or false");
      return;
    case "$size":
      if (typeof arg !== "number" || !Number.isInteger(arg) || arg < 0) throw new Refused(path, "type", "$size takes a whole number");
      return;
    case "$regex": {
      if (typeof arg !== "string" || arg.length === 0) throw new Refused(path, "type", "$regex takes a pattern (a string)");
      const problem = patternProblem(arg);
      if (problem) throw new Refused(path, "format", `$regex ${problem}`);
      return;
    }
    case "$not":
      if (!isObject(arg) || Object.keys(arg).length === 0 || !Object.keys(arg).every((k) => k.startsWith("$"))) {
        throw new Refused(path, "type", "$not takes an object of operators");
      }
      checkCondition(arg, path);
      return;
    case "$elemMatch":
      if (!isObject(arg) || Object.keys(arg).length === 0) throw new Refused(path, "type", "$elemMatch takes a query or an object of operators");
      if (Object.keys(arg).every((k) => k.startsWith("$") && !LOGICAL.has(k))) checkCondition(arg, path);
      else checkQuery(arg, path);
      return;
    case "$and":
    case "$or":
    case "$nor":
      throw new Refused(path, "format", `${op} applies to the whole document, not to a field`);
    default:
      // $eq $ne $gt $gte $lt $lte: any JSON value.
      return;
  }
}

/** The first thing wrong with a filter, or undefined when ingest may run it. */
export function filterProblem(filter: unknown): FilterProblem | undefined {
  if (!isObject(filter)) return { path: [], reason: "type", message: "a filter is a query object" };
  if (utf8Length(JSON.stringify(filter)) > MAX_FILTER_BYTES) return { path: [], reason: "length", message: `a filter is at most ${MAX_FILTER_BYTES} bytes of JSON` };
  if (depthOf(filter) > MAX_FILTER_DEPTH) return { path: [], reason: "range", message: `a filter nests at most ${MAX_FILTER_DEPTH} levels` };
  try {
    checkQuery(filter, []);
    return undefined;
  } catch (err) {
    if (err instanceof Refused) return { path: err.path, reason: err.reason, message: err.message };
    throw err;
  }
}
