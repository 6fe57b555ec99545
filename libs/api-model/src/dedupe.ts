import { z } from "zod";
import { extension } from "./common.js";
import { MAX_DEDUPE_WINDOW_SECONDS, MAX_DEDUPE_FIELDS } from "./values.js";

/**
 * Per-endpoint deduplication (design §17, ADR 0083): a capture whose key (the provider's own
 * delivery or event id, `key: "auto"`, or the values of named `fields`) was already seen by
 * the endpoint within `windowSeconds` is stored and answered like the first, marked
 * `duplicateOf` it, and not forwarded. Validated here, once, for the gateway, the CLI, the
 * configuration file and the dashboard; ingest reads the stored settings (dedupeSettingsOf).
 */

export const MAX_DEDUPE_FIELD_LENGTH = 200;
/** Object members of a `body.` field, at most. */
export const MAX_DEDUPE_BODY_DEPTH = 8;

/** Where a field's value comes from: a header (any case), a query parameter, or a JSON body member path. */
export type DedupeFieldSource = { header: string } | { query: string } | { body: string[] };

const HEADER = /^header\.([!#$%&'*+.^_`|~0-9A-Za-z-]{1,100})$/;
const QUERY = /^query\.([^&=#\s]{1,100})$/;
const BODY = /^body\.([A-Za-z0-9_$-]{1,64}(?:\.[A-Za-z0-9_$-]{1,64})*)$/;

/**
 * A field as `fields` names it: `header.<name>` (its first value), `query.<name>` (its first
 * value) or `body.<member>[.<member>...]` (a string, number or boolean of a JSON body; arrays
 * are not indexed). Undefined when it is none of them.
 */
export function parseDedupeField(field: string): DedupeFieldSource | undefined {
  if (field.length > MAX_DEDUPE_FIELD_LENGTH) return undefined;
  const header = HEADER.exec(field);
  if (header) return { header: (header[1] as string).toLowerCase() };
  const query = QUERY.exec(field);
  if (query) return { query: query[1] as string };
  const body = BODY.exec(field);
  if (body) {
    const path = (body[1] as string).split(".");
    return path.length <= MAX_DEDUPE_BODY_DEPTH ? { body: path } : undefined;
  }
  return undefined;
}

const dedupeField = z
  .string()
  .max(MAX_DEDUPE_FIELD_LENGTH)
  .refine((f) => parseDedupeField(f) !== undefined, {
    message: `header.<name>, query.<name> or body.<member>[.<member>...] (at most ${MAX_DEDUPE_BODY_DEPTH} members)`,
    params: { reason: "pattern" },
  });

export const dedupeSettings = z
  .strictObject({
    windowSeconds: z
      .int()
      .min(1)
      .max(MAX_DEDUPE_WINDOW_SECONDS)
      .describe(`How long after the first capture with a key another one with it is a duplicate: 1 to ${MAX_DEDUPE_WINDOW_SECONDS} seconds (30 days).`),
    key: z
      .literal("auto")
      .optional()
      .describe(
        "`auto`: the provider's own delivery or event id (Stripe's body `id`, GitHub's `X-GitHub-Delivery`, Shopify's `X-Shopify-Webhook-Id`, Standard Webhooks' `webhook-id`, Slack's `event_id`...; docs/providers.md). A capture whose provider sends none takes no part.",
      ),
    fields: z
      .array(dedupeField)
      .min(1)
      .max(MAX_DEDUPE_FIELDS)
      .refine((fs) => new Set(fs).size === fs.length, { message: "a field named twice", params: { reason: "duplicate" } })
      .optional()
      .describe(
        `Instead of \`key\`: up to ${MAX_DEDUPE_FIELDS} values making the key together: \`header.<name>\`, \`query.<name>\`, \`body.<member>[.<member>...]\` (a string, number or boolean). A capture with none of them takes no part.`,
      ),
  })
  .superRefine((d, ctx) => {
    if ((d.key === undefined) === (d.fields === undefined)) {
      ctx.addIssue({ code: "custom", path: ["key"], message: 'give key "auto" or fields, one of them', params: { reason: d.key === undefined ? "required" : "unsupported" } });
    }
  })
  .meta({
    ...extension,
    description:
      "Deduplication (design §17): a capture whose key the endpoint saw within windowSeconds is stored and answered like the first, shows `duplicateOf` the first, and is not forwarded (its deliveries `duplicate`).",
  });
export type DedupeSettings = z.infer<typeof dedupeSettings>;

/** The stored settings (endpoint `dedupe_json`), validated when saved: what does not parse reads as none. */
export function dedupeSettingsOf(json: string): DedupeSettings | undefined {
  if (!json) return undefined;
  try {
    const parsed = dedupeSettings.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
