import { z } from "zod";
import { REPLAY_MODES, REPLAY_RESULTS } from "./values.js";
import { extension, uuid, warning } from "./common.js";

export const curlQuery = z.strictObject({
  unmasked: z
    .enum(["true", "false", "1", "0"])
    .transform((v) => v === "true" || v === "1")
    .optional()
    .describe("true: header values are not masked."),
});

const warnings = z.array(warning).optional().meta({ ...extension, description: "Present when a replay as captured would fail (`signature_timestamp_stale`) or differs from what the sender sent (`body_redacted`: the event was stored redacted, design §16)." });

/** Operation 8's answer. */
export const curlExport = z.object({
  command: z.string(),
  byteIdentical: z.boolean(),
  bodyOmitted: z.boolean(),
  headersMasked: z.boolean(),
  warnings,
});
export type CurlExportJson = z.infer<typeof curlExport>;


/** Operation 9's body. */
export const replayRequest = z.strictObject({
  target_url: z.string().min(1).max(2048),
  mode: z.enum(REPLAY_MODES).optional(),
  target_secret: z.string().min(1).max(1024).optional(),
});
export type ReplayRequest = z.input<typeof replayRequest>;

/** Operation 9's answer. */
export const replayResult = z.object({
  result: z.enum(REPLAY_RESULTS),
  target_status: z.int32().optional(),
  network_failure_reason: z.string().optional(),
  duration_ms: z.int(),
  response_excerpt_base64: z.base64(),
  excerpt_truncated: z.boolean(),
  source_body_truncated: z.boolean(),
  mode: z.enum(REPLAY_MODES),
  target_url: z.string(),
  event_id: uuid,
  audit_id: uuid.optional(),
  warnings,
});
export type ReplayResultJson = z.infer<typeof replayResult>;
