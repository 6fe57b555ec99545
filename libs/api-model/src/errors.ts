import { z } from "zod";
import { FIELD_REASONS, HEALTH_CHECKS, QUOTA_NAMES } from "./values.js";
import { extension } from "./common.js";


/** Every error answer of /v1 (docs/design.md §3). */
export const errorReply = z.object({
  error: z.string(),
  message: z.string(),
  details: z.object({
    field: z.string().optional(),
    reason: z.enum(FIELD_REASONS).optional(),
    quota: z.enum(QUOTA_NAMES).optional().meta({ ...extension, description: "quota_exceeded: the quota that is spent." }),
    limit: z.int().optional().meta({ ...extension, description: "quota_exceeded (endpoints, waits, listeners): the quota's size." }),
  }),
  requestId: z.string(),
});
export type ErrorReplyJson = z.infer<typeof errorReply>;


/** `GET /healthz` (gateway and ingest). */
export const health = z
  .object({ status: z.enum(["ok", "unavailable"]), checks: z.record(z.string(), z.enum(HEALTH_CHECKS)) })
  .meta({ ...extension });
export type HealthJson = z.infer<typeof health>;
