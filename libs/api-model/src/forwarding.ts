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
  destinationId: z
    .string()
    .optional()
    .meta({ ...extension, description: "The destination the attempt went to (design §17); the nil UUID for an attempt `whc listen` reported." }),
  requestSha256: z
    .string()
    .nullable()
    .optional()
    .meta({ ...extension, description: "Lower-case hex SHA-256 of the body sent (after the destination's transform); null when nothing was sent." }),
  message: z
    .string()
    .optional()
    .meta({ ...extension, description: "With error transform_failed: what the transform did (its exception, a timeout, a bad return)." }),
  warnings: z
    .array(warning)
    .optional()
    .meta({ ...extension, description: "Redeliver's answer only: what the caller should know of what was sent (`body_redacted`: the event was stored redacted, and so it was sent)." }),
});
export type ForwardAttemptJson = z.infer<typeof forwardAttempt>;

/** One delivery of an event (design §17): its destination, its state and its own attempts. */
export const delivery = z
  .object({
    destinationId: z.string().describe("The destination's id (the nil UUID: the attempts `whc listen` reported)."),
    name: z.string().describe("The destination's name (\"\" once the destination is removed from the endpoint)."),
    state: z.enum(DELIVERY_STATES),
    target: z.string().describe("Where this delivery goes: the destination's URL with the capture's sub-path and query when keepPath."),
    nextAttemptAt: dateTime.nullable(),
    attempts: z.array(forwardAttempt),
  })
  .meta({ ...extension });
export type DeliveryJson = z.infer<typeof delivery>;

/**
 * An event's `forwardedResponse` once it was forwarded (`{}` before): part two's fields over
 * every delivery (design §17: `state` the aggregate, `target` and `nextAttemptAt` the first
 * delivery's and the earliest, `attempts` all of them), and the deliveries one by one.
 */
export const forwardedResponse = z.object({
  state: z.enum(DELIVERY_STATES),
  target: z.string(),
  nextAttemptAt: dateTime.nullable(),
  attempts: z.array(forwardAttempt),
  deliveries: z.array(delivery).optional().meta({ ...extension, description: "One per destination the capture went to (design §17)." }),
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
