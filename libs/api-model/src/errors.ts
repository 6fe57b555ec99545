import { z } from "zod";
import { FIELD_REASONS, HEALTH_CHECKS, QUOTA_NAMES, SCOPES, TARGET_REFUSAL_REASONS, TRIGGER_UNAVAILABLE_CAUSES } from "./values.js";
import { extension } from "./common.js";


/** Every error answer of /v1 (docs/design.md §3). */
export const errorReply = z.object({
  error: z.string(),
  message: z.string(),
  details: z.object({
    field: z
      .string()
      .optional()
      .describe(
        "validation_failed: the offending field or parameter; forbidden, creating a key or an alert channel: `scopes` or `endpointIds`, the part wider than the calling key's own; conflict: the field whose value is taken (an alert channel's `name`).",
      ),
    reason: z
      .union([z.enum(FIELD_REASONS), z.enum(TARGET_REFUSAL_REASONS)])
      .optional()
      .describe("validation_failed: why the field was refused; target_not_allowed: what of the target was refused."),
    quota: z.enum(QUOTA_NAMES).optional().meta({ ...extension, description: "quota_exceeded: the quota that is spent." }),
    limit: z.int().optional().meta({ ...extension, description: "quota_exceeded (endpoints, waits, listeners, alert_channels): the quota's size." }),
    allowed: z
      .array(z.string())
      .optional()
      .meta({ ...extension, description: "validation_failed on a value outside a list (a trigger's eventType): the values accepted." }),
    cause: z
      .enum(TRIGGER_UNAVAILABLE_CAUSES)
      .optional()
      .meta({ ...extension, description: "trigger_unavailable: why the endpoint cannot be triggered." }),
    status: z.int().optional().meta({ ...extension, description: "trigger_unavailable (not_captured): the status ingest answered." }),
    scope: z
      .enum(SCOPES)
      .optional()
      .meta({ ...extension, description: "forbidden: the scope the API key would need (design §15)." }),
  }),
  requestId: z.string(),
});
export type ErrorReplyJson = z.infer<typeof errorReply>;


/** `GET /healthz` (gateway and ingest). */
export const health = z
  .object({ status: z.enum(["ok", "unavailable"]), checks: z.record(z.string(), z.enum(HEALTH_CHECKS)) })
  .meta({ ...extension });
export type HealthJson = z.infer<typeof health>;

/**
 * `GET /readyz` (gateway and ingest): every dependency by name (`catalog`, `crypto`,
 * `replay`, `nats`) and the names of those down, in `failing`.
 */
export const readiness = z
  .object({
    status: z.enum(["ok", "unavailable"]),
    checks: z.record(z.string(), z.enum(HEALTH_CHECKS)),
    failing: z.array(z.string()),
  })
  .meta({ ...extension });
export type ReadinessJson = z.infer<typeof readiness>;
