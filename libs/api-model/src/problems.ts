import type { z } from "zod";
import type { FIELD_REASONS } from "./values.js";

export type FieldReason = (typeof FIELD_REASONS)[number];

/** The first thing wrong with an input, named as the API names it (docs/design.md §3). */
export interface Problem {
  /** Dotted path of the field (`response.rules.2.status`); an unknown key is named itself; "" for the whole value. */
  field: string;
  reason: FieldReason;
  message: string;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (typeof value !== "object" || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

function reasonOf(issue: z.core.$ZodIssue, input: unknown): FieldReason {
  switch (issue.code) {
    case "invalid_type":
      return valueAt(input, issue.path) === undefined ? "required" : "type";
    case "too_big":
    case "too_small":
      return issue.origin === "string" || issue.origin === "array" ? "length" : "range";
    case "invalid_format":
      return issue.format === "regex" ? "pattern" : "format";
    case "unrecognized_keys":
      return "unknown";
    case "custom":
      return (issue.params?.reason as FieldReason | undefined) ?? "format";
    default:
      return "format";
  }
}

/** The first issue of a failed parse as a Problem: what the gateway answers, the CLI and the dashboard show. */
export function firstProblem(error: z.ZodError, input: unknown): Problem {
  const issue = error.issues[0] as z.core.$ZodIssue;
  const path = issue.path.map(String);
  if (issue.code === "unrecognized_keys") path.push(issue.keys[0] ?? "");
  return { field: path.join("."), reason: reasonOf(issue, input), message: issue.message };
}

/** Parses `input` with `schema`: the value, or the first problem. */
export function checkShape<S extends z.ZodType>(schema: S, input: unknown): { ok: true; value: z.output<S> } | { ok: false; problem: Problem } {
  const result = schema.safeParse(input);
  return result.success ? { ok: true, value: result.data } : { ok: false, problem: firstProblem(result.error, input) };
}
