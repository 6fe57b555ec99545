import { type z } from "zod";
import { AppError, type FieldReason } from "@whc/errors";

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
    case "invalid_value":
      return "format";
    case "custom":
      return (issue.params?.reason as FieldReason | undefined) ?? "format";
    default:
      return "format";
  }
}

/** Parses with a schema; the first issue becomes validation_failed naming field and reason. */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, location = ""): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0] as z.core.$ZodIssue;
  let path = issue.path.map(String);
  if (issue.code === "unrecognized_keys") path = [...path, issue.keys[0] ?? ""];
  const field = path.join(".") || location;
  throw new AppError("validation_failed", `${field}: ${issue.message}`, { field, fieldReason: reasonOf(issue, input) });
}
