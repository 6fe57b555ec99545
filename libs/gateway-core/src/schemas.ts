import { z } from "zod";

/** Extension values (DESIGN.md §3) that the interface leaves open. */
export const PROVIDERS = ["generic", "stripe", "github", "slack", "shopify", "standard_webhooks"] as const;
export const OPERATING_MODES = ["capture", "metadata_only"] as const;
export const ENDPOINT_STATUSES = ["active", "paused"] as const;
export const VERIFICATIONS = ["verified", "failed", "unverified"] as const;

export const uuidSchema = z.uuid({ version: undefined });
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;

export const createEndpointSchema = z.strictObject({
  slug: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/).optional(),
  displayName: z.string().min(1).max(100).optional(),
  operatingMode: z.enum(OPERATING_MODES).optional(),
  status: z.enum(ENDPOINT_STATUSES).optional(),
  replayFromDashboard: z.boolean().optional(),
  replayFromApi: z.boolean().optional(),
  genericSignatureHeader: z.string().regex(HEADER_NAME).optional(),
  genericSignaturePrefix: z.string().max(100).optional(),
  provider: z.enum(PROVIDERS).optional().meta({ "x-extension": true }),
  secret: z.string().min(1).max(1024).optional().meta({ "x-extension": true, writeOnly: true }),
});
export type CreateEndpointBody = z.output<typeof createEndpointSchema>;

const dateTime = z.iso.datetime({ offset: true });
const int32Text = z
  .string()
  .regex(/^-?\d{1,10}$/)
  .transform(Number)
  .pipe(z.number().int().min(-2147483648).max(2147483647));

/** `25`, `25s`, `0` to `60` seconds. */
const waitText = z
  .string()
  .regex(/^\d{1,2}s?$/)
  .transform((v) => Number(v.replace(/s$/, "")))
  .pipe(z.number().int().min(0).max(60));

export const listEventsQuerySchema = z
  .strictObject({
    before: dateTime.optional(),
    beforeId: uuidSchema.optional(),
    after: dateTime.optional(),
    afterId: uuidSchema.optional(),
    from: dateTime.optional(),
    to: dateTime.optional(),
    eventType: z.string().min(1).max(200).optional(),
    provider: z.string().min(1).max(50).optional(),
    responseCode: int32Text.optional(),
    status: z.enum(VERIFICATIONS).optional(),
    search: z.string().max(500).optional(),
    wait: waitText.optional(),
    limit: z.string().regex(/^\d{1,4}$/).transform(Number).pipe(z.number().int().min(1).max(200)).optional(),
  })
  .superRefine((q, ctx) => {
    for (const [time, id] of [
      ["before", "beforeId"],
      ["after", "afterId"],
    ] as const) {
      if ((q[time] === undefined) !== (q[id] === undefined)) {
        const missing = q[time] === undefined ? time : id;
        ctx.addIssue({ code: "invalid_type", expected: "string", path: [missing], message: `${missing} is required with its pair` });
      }
    }
  });
export type ListEventsQuery = z.output<typeof listEventsQuerySchema>;

export const curlQuerySchema = z.strictObject({
  unmasked: z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1").optional(),
});

export const replayBodySchema = z.strictObject({
  target_url: z.string().min(1).max(2048),
  mode: z.enum(["exact", "resign"]).optional(),
  target_secret: z.string().min(1).max(1024).optional(),
});
