import { z } from "zod";
import { extension } from "./common.js";

export const DIFF_LIMITS = { ignore: 50, ignorePathLength: 200, changes: 1000, textLines: 2000 } as const;

export const BODY_DIFF_KINDS = ["json", "text", "binary"] as const;

/** `GET /v1/endpoints/{endpointId}/events/{eventId}/diff`'s query (design §19). */
export const eventDiffQuery = z
  .strictObject({
    with: z.uuid({ version: undefined }).describe("The event compared to (`to`); any endpoint of the account."),
    ignore: z
      .string()
      .max(DIFF_LIMITS.ignore * (DIFF_LIMITS.ignorePathLength + 1))
      .transform((v) => v.split(",").map((p) => p.trim()).filter((p) => p !== ""))
      .pipe(
        z
          .array(z.string().max(DIFF_LIMITS.ignorePathLength).regex(/^(method|path|query|headers|body)(\.[^.]+)*$/, "a dotted path under method, path, query, headers or body"))
          .max(DIFF_LIMITS.ignore),
      )
      .optional()
      .describe("Comma-separated dotted paths left out, each with everything under it: `headers.date,body.created,query`. Header names are case-insensitive."),
  })
  .meta({ ...extension });
export type EventDiffQueryText = z.input<typeof eventDiffQuery>;

export const eventDiffChange = z.object({
  op: z.enum(["add", "remove", "replace"]),
  path: z
    .string()
    .describe(
      "A JSON Pointer into {method, path, query, headers, body}: `/headers/stripe-signature`, `/query/page`, `/body/data/amount` (JSON), " +
        "`/body/3` (text: the line's index, in `from` for remove and replace, in `to` for add), `/body` (binary).",
    ),
  from: z.unknown().optional().describe("The value in the event of the path; absent for add."),
  to: z.unknown().optional().describe("The value in `with`; absent for remove."),
});
export type EventDiffChangeJson = z.infer<typeof eventDiffChange>;

export const eventDiff = z
  .object({
    same: z.boolean().describe("No change left once `ignore` is applied."),
    bodyKind: z.enum(BODY_DIFF_KINDS).describe("json when both bodies parse as JSON, text when both are UTF-8, else binary (compared by size and SHA-256)."),
    changes: z.array(eventDiffChange),
    truncated: z.boolean().meta({ ...extension, description: `More than ${DIFF_LIMITS.changes} changes: the first ones are listed.` }),
  })
  .meta({ ...extension });
export type EventDiffJson = z.infer<typeof eventDiff>;
