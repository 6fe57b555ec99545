import { z } from "zod";
import { extension, uuid } from "./common.js";

/** One signature scheme the service knows (`GET /v1/providers`), for pickers and docs. */
export const providerInfo = z.object({
  name: z.string(),
  label: z.string(),
  signs: z.string(),
  signatureHeaders: z.array(z.string()),
  toleranceSeconds: z.int().optional(),
  secretFormat: z.object({ description: z.string(), example: z.string().optional() }),
  sampleEventTypes: z
    .array(z.string())
    .meta({ description: "The sample events `POST /v1/endpoints/{id}/trigger` can send for this provider; empty for generic." }),
});
export type ProviderInfoJson = z.infer<typeof providerInfo>;

export const providerList = z.object({ items: z.array(providerInfo) }).meta({ ...extension });
export type ProviderListJson = z.infer<typeof providerList>;

/** Limits of a trigger request's `set` (the same as libs/signatures' SET_LIMITS, which applies them). */
export const TRIGGER_SET_MAX_ENTRIES = 50;
export const TRIGGER_SET_MAX_PATH = 200;

/** `POST /v1/endpoints/{id}/trigger`: which sample to send, and the fields to set in it. */
export const triggerRequest = z
  .strictObject({
    eventType: z.string().min(1).max(200),
    set: z
      .record(z.string().max(TRIGGER_SET_MAX_PATH), z.unknown())
      .check((ctx) => {
        if (Object.keys(ctx.value).length > TRIGGER_SET_MAX_ENTRIES) {
          ctx.issues.push({ code: "custom", message: `at most ${TRIGGER_SET_MAX_ENTRIES} fields can be set`, input: ctx.value, params: { reason: "length" } });
        }
      })
      .optional()
      .meta({
        description:
          "Fields to override: dotted paths into a JSON body (`data.object.amount`, array elements by index), field names of a form body (Twilio); values are JSON.",
      }),
  })
  .meta({ ...extension });
export type TriggerRequestJson = z.input<typeof triggerRequest>;

/**
 * The header ingest names a stored capture's event id in, on every answer to one (the configured
 * answers and proxied ones too, whose bodies are not ingest's); trigger reads it.
 */
export const EVENT_ID_HEADER = "X-Whc-Event-Id";

export const triggerResult = z.object({ eventId: uuid }).meta({ ...extension });
export type TriggerResultJson = z.infer<typeof triggerResult>;
