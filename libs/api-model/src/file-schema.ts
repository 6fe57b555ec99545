import { z } from "zod";

type Json = { [key: string]: unknown };

/** `x-extension` says what goes beyond interface 0.1.0 of /v1; it means nothing in a file. */
function withoutExtensionMarks(node: unknown): void {
  if (typeof node !== "object" || node === null) return;
  delete (node as Json)["x-extension"];
  for (const value of Object.values(node)) withoutExtensionMarks(value);
}

/** The JSON Schema (2020-12) of a file format the CLI reads and writes, as docs/ publishes it. */
export function fileJsonSchema(schema: z.ZodType, title: string): Json {
  const json = z.toJSONSchema(schema, { io: "input", target: "draft-2020-12", unrepresentable: "any" }) as Json;
  withoutExtensionMarks(json);
  return { ...json, title };
}
