import { z } from "zod";
import { ATTEMPT_ERRORS, DELIVERY_STATES, ATTEMPT_TRIGGERS, DESTINATION_DEFAULTS } from "./values.js";
import { dateTime, extension, warning } from "./common.js";

/**
 * A destination's settings (design §11; ADR 0014): where a relay or proxy endpoint's
 * deliveries go and how they are tried. The one definition: ingest, replay, the catalog's
 * stored `forward_json` (this object, without its secret), the CLI and the dashboard use it.
 */
export const destinationSettings = z.strictObject({
  url: z.string().min(1).max(2048).describe("The destination (http or https); vetted by the egress guard when saved and at every send."),
  keepPath: z.boolean().default(DESTINATION_DEFAULTS.keepPath).describe("Append the capture's sub-path and query to url."),
  timeoutMs: z.int().min(100).max(60_000).default(DESTINATION_DEFAULTS.timeoutMs).describe("Deadline of one attempt."),
  maxAttempts: z.int().min(1).max(20).default(DESTINATION_DEFAULTS.maxAttempts).describe("relay: attempts before the delivery is exhausted."),
});
/** A destination's settings as stored and read: defaults filled, no secret. */
export type DestinationSettings = z.output<typeof destinationSettings>;

/**
 * The Endpoint's `forward` as a client sends it: a destination's settings and its target
 * secret, write-only (the Endpoint shows `targetSecretSet`).
 */
export const forwardSettings = destinationSettings.extend({
  targetSecret: z.string().min(1).max(1024).nullable().optional().meta({ writeOnly: true, description: "Set: signatures are recomputed with it (as replay's resign mode); null removes it." }),
});
/** What a client sends. */
export type ForwardSettingsInput = z.input<typeof forwardSettings>;
export type ForwardSettings = z.output<typeof forwardSettings>;

/** The Endpoint's `forward` as answered. */
export const forwardView = z.object({
  ...destinationSettings.shape,
  keepPath: z.boolean(),
  timeoutMs: z.int(),
  maxAttempts: z.int(),
  targetSecretSet: z.boolean(),
});
export type ForwardViewJson = z.infer<typeof forwardView>;

/** One request to the destination (or to a `whc listen` app) and what it answered. */
export const forwardAttempt = z.object({
  n: z.int(),
  trigger: z.enum(ATTEMPT_TRIGGERS),
  at: dateTime,
  url: z.string(),
  durationMs: z.int(),
  status: z.int().nullable(),
  headers: z.record(z.string(), z.array(z.string())),
  bodyBase64: z.string().describe("The answer's first bytes, up to 64 KiB."),
  bodyTruncated: z.boolean(),
  error: z.enum(ATTEMPT_ERRORS).nullable(),
  warnings: z
    .array(warning)
    .optional()
    .meta({ ...extension, description: "Redeliver's answer only: what the caller should know of what was sent (`body_redacted`: the event was stored redacted, and so it was sent)." }),
});
export type ForwardAttemptJson = z.infer<typeof forwardAttempt>;

/** An event's `forwardedResponse` once it was forwarded (`{}` before). */
export const forwardedResponse = z.object({
  state: z.enum(DELIVERY_STATES),
  target: z.string(),
  nextAttemptAt: dateTime.nullable(),
  attempts: z.array(forwardAttempt),
});
export type ForwardedResponseJson = z.infer<typeof forwardedResponse>;

/** `POST .../attempts`: an attempt a client made itself (whc listen). */
export const recordAttemptRequest = z
  .strictObject({
    url: z.string().min(1).max(2048),
    status: z.int().min(100).max(599).optional(),
    error: z.enum(ATTEMPT_ERRORS).optional(),
    durationMs: z.int().min(0).max(86_400_000),
    headers: z.record(z.string(), z.array(z.string())).optional(),
    bodyBase64: z.base64().max(128 * 1024).optional(),
  })
  .refine((a) => (a.status === undefined) !== (a.error === undefined), { message: "give status or error", path: ["status"] })
  .meta({ ...extension });
export type RecordAttemptRequest = z.input<typeof recordAttemptRequest>;

/**
 * Where one event goes, its target: the destination, with the capture's sub-path and query when keepPath
 * (`rest` is what followed the endpoint's webhook URL: "", "/ci", "/ci?x=1" or "?x=1"). The
 * sub-path continues the destination's path (one slash between them); a query is added to
 * the destination's own with `&`. Both are kept byte for byte, never re-encoded.
 */
export function targetUrl(settings: Pick<DestinationSettings, "url" | "keepPath">, rest: string): string {
  const base = settings.url.split("#", 1)[0] as string;
  if (!settings.keepPath || !rest) return base;
  const [restPath, restQuery] = splitQuery(rest.split("#", 1)[0] as string);
  const [basePath, baseQuery] = splitQuery(base);
  const path = restPath ? basePath.replace(/\/+$/, "") + (restPath.startsWith("/") ? restPath : `/${restPath}`) : basePath;
  const query = [baseQuery, restQuery].filter((q) => q).join("&");
  return query ? `${path}?${query}` : path;
}

function splitQuery(text: string): [path: string, query: string] {
  const at = text.indexOf("?");
  return at < 0 ? [text, ""] : [text.slice(0, at), text.slice(at + 1)];
}
