import type { z } from "zod";
import { checkShape } from "@whc/api-model";
import { AppError } from "@whc/errors";

/** Parses with a schema; the first problem becomes validation_failed naming field and reason. */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, location = ""): z.output<S> {
  const checked = checkShape(schema, input);
  if (checked.ok) return checked.value;
  const field = checked.problem.field || location;
  throw new AppError("validation_failed", `${field}: ${checked.problem.message}`, { field, fieldReason: checked.problem.reason });
}
