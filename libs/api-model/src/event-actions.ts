import { z } from "zod";
import { REPLAY_MODES, REPLAY_RESULTS } from "./values.js";
import { extension, headerName, uuid, warning } from "./common.js";

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


export const REPLAY_EDIT_LIMITS = { headers: 100, headerValueLength: 8192, bodyLength: 65_536, patchOperations: 1000 } as const;

const BODY_EDITS = ["body", "bodyBase64", "jsonMergePatch", "jsonPatch"] as const;

const jsonPatchOperation = z.strictObject({
  op: z.enum(["add", "remove", "replace", "move", "copy", "test"]),
  path: z.string().max(2048),
  from: z.string().max(2048).optional(),
  value: z.unknown().optional(),
});

/** What replay changes in the captured request before sending it (design §19). */
export const replayEdits = z
  .strictObject({
    headers: z
      .strictObject({
        set: z
          .record(headerName, z.string().max(REPLAY_EDIT_LIMITS.headerValueLength).regex(/^[\t\x20-\x7e\x80-\xff]*$/, "a header value: no control characters"))
          .refine((h) => Object.keys(h).length <= REPLAY_EDIT_LIMITS.headers, `at most ${REPLAY_EDIT_LIMITS.headers} headers`)
          .optional()
          .describe("Headers set, each replacing every captured value of its name (case-insensitive)."),
        remove: z.array(headerName).max(REPLAY_EDIT_LIMITS.headers).optional().describe("Header names removed (case-insensitive)."),
      })
      .optional(),
    body: z.string().max(REPLAY_EDIT_LIMITS.bodyLength).optional().describe("The body sent instead, as UTF-8 text."),
    bodyBase64: z.base64().max(REPLAY_EDIT_LIMITS.bodyLength).optional().describe("The body sent instead, as bytes."),
    jsonMergePatch: z.record(z.string(), z.unknown()).optional().describe("An RFC 7386 merge patch applied to the captured JSON body."),
    jsonPatch: z.array(jsonPatchOperation).max(REPLAY_EDIT_LIMITS.patchOperations).optional().describe("RFC 6902 operations applied to the captured JSON body."),
  })
  .refine((e) => BODY_EDITS.filter((k) => e[k] !== undefined).length <= 1, { message: "at most one of body, bodyBase64, jsonMergePatch and jsonPatch", path: ["body"] })
  .meta({ ...extension });
export type ReplayEditsJson = z.input<typeof replayEdits>;

/** Operation 9's body. */
export const replayRequest = z.strictObject({
  target_url: z.string().min(1).max(2048),
  mode: z.enum(REPLAY_MODES).optional(),
  target_secret: z.string().min(1).max(1024).optional(),
  edits: replayEdits.optional().describe("Changes to the captured request; with mode resign the edited bytes are signed."),
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
  edited: z.boolean().optional().meta({ ...extension, description: "true when `edits` changed the request sent." }),
  request_sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional()
    .meta({ ...extension, description: "Lower-case hex SHA-256 of the body bytes sent." }),
});
export type ReplayResultJson = z.infer<typeof replayResult>;
