import { z } from "zod";
import { dateTime, extension, uuid } from "./common.js";
import { destinationSettings } from "./forwarding.js";
import { filterProblem, FILTER_OPERATORS, MAX_FILTER_BYTES, MAX_FILTER_DEPTH } from "./destination-filter.js";
import { MAX_DESTINATIONS, BREAKER_DEFAULTS } from "./values.js";

/**
 * Routing (design §17, ADR 0080): a relay endpoint's destinations, each with its own filter,
 * transform and delivery settings. One definition of each shape: the gateway validates with
 * them, the catalog stores `storedDestination` (as the endpoint's forward_json), ingest and
 * replay read it back, and the CLI and the dashboard import the types.
 */

/** A transform's source, in UTF-8 bytes (design §17). */
export const MAX_TRANSFORM_BYTES = 64 * 1024;
/**
 * The delivery `whc listen` reports its attempts under (design §11): not a destination of the
 * endpoint's, the client's own, shown under this id and name.
 */
export const LISTEN_DESTINATION_ID = "00000000-0000-0000-0000-000000000000";
export const LISTEN_DESTINATION_NAME = "whc listen";

/** A destination's name: unique within its endpoint; `whc apply` matches destinations by it. */
export const destinationName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/);

/** The name a destination saved without one gets: its place in the list, from 1. */
export function defaultDestinationName(index: number): string {
  return `destination-${index + 1}`;
}

export const destinationFilter = z
  .record(z.string(), z.unknown())
  .superRefine((filter, ctx) => {
    const problem = filterProblem(filter);
    if (problem) ctx.addIssue({ code: "custom", path: problem.path, message: problem.message, params: { reason: problem.reason } });
  })
  .meta({
    description:
      `A MongoDB-style query over the capture's view {method, path, query, headers, body, eventType, provider, verification} ` +
      `(headers and query by lower-case name, first value; body parsed JSON, else UTF-8 text, else null). Operators: ` +
      `${FILTER_OPERATORS.join(" ")}; any other is refused (reason unsupported_operator). At most ${MAX_FILTER_BYTES} bytes of ` +
      `JSON and ${MAX_FILTER_DEPTH} levels deep. Absent: every capture.`,
  });
export type DestinationFilter = z.infer<typeof destinationFilter>;

export const transformSource = z
  .string()
  .min(1)
  .refine((s) => new TextEncoder().encode(s).length <= MAX_TRANSFORM_BYTES, {
    message: `a transform is at most ${MAX_TRANSFORM_BYTES} bytes`,
    params: { reason: "length" },
  })
  .meta({
    description:
      "JavaScript defining `transform(req)`: `req` is {method, path, query, headers (name -> [values]), body} (parsed JSON for " +
      "JSON bodies, else text; `bodyBase64` for binary ones). It returns the request to send, or null to skip the delivery. " +
      "Runs in a sandbox: at most 50 ms of CPU and 16 MiB, no I/O, no timers.",
  });

/**
 * Delivery control (design §18, ADRs 0087 and 0088): a rate limit and a breaker per destination,
 * and a manual pause, enforced by the catalog when the replay replicas claim deliveries.
 */
export const BREAKER_STATES = ["closed", "open", "half_open"] as const;
export type BreakerState = (typeof BREAKER_STATES)[number];
/** The delay between probes doubles after each failed one, up to this. */
export const MAX_PROBE_DELAY_MS = 600_000;
/** Held deliveries drain at most this many a second when the destination has no rate limit. */
export const DRAIN_PER_SECOND = 10;

export const rateLimitSettings = z
  .strictObject({
    perSecond: z.int().min(1).max(10_000).optional(),
    perMinute: z.int().min(1).max(600_000).optional(),
    concurrency: z.int().min(1).max(100).optional(),
  })
  .superRefine((r, ctx) => {
    if (r.perSecond !== undefined && r.perMinute !== undefined) {
      ctx.addIssue({ code: "custom", path: ["perMinute"], message: "give perSecond or perMinute, not both", params: { reason: "format" } });
    }
    if (r.perSecond === undefined && r.perMinute === undefined && r.concurrency === undefined) {
      ctx.addIssue({ code: "custom", path: ["perSecond"], message: "give perSecond, perMinute or concurrency", params: { reason: "required" } });
    }
  })
  .meta({
    description:
      "At most this many deliveries a second (or a minute), evenly spaced, and this many in flight at once, across all replay replicas. " +
      "A delivery that must wait stays `pending` with `nextAttemptAt` at its turn.",
  });
export type RateLimitSettings = z.infer<typeof rateLimitSettings>;

export const breakerSettings = z
  .strictObject({
    failures: z.int().min(1).max(100).default(BREAKER_DEFAULTS.failures),
    probeAfterMs: z.int().min(1000).max(MAX_PROBE_DELAY_MS).default(BREAKER_DEFAULTS.probeAfterMs),
  })
  .meta({
    description:
      "Opens after this many consecutive attempts ending in a network error, a timeout, 429 or 5xx: its deliveries are then held. " +
      "probeAfterMs later one held delivery is tried (the delay doubles after each failed probe, up to 10 minutes). Absent: these defaults.",
  });
export type BreakerSettings = z.output<typeof breakerSettings>;

/** The breaker as a destination shows it: its settings (defaults when none were given) and where it stands. */
export const breakerView = z
  .object({
    failures: z.int(),
    probeAfterMs: z.int(),
    state: z.enum(BREAKER_STATES).describe("`closed`: deliveries go; `open`: nothing is sent, deliveries are held; `half_open`: one held delivery is being tried."),
    since: dateTime.nullable().describe("When it entered its state; null: closed since the destination was made."),
    consecutiveFailures: z.int().describe("Attempts in a row that ended in a network error, a timeout, 429 or 5xx."),
    held: z.int().describe("Deliveries held (breaker open or destination paused): never expired, sent oldest first once it closes (and is not paused)."),
    nextProbeAt: dateTime.nullable().describe("When one held delivery is tried next (open, and not paused); null otherwise."),
  })
  .meta({ ...extension });
export type BreakerViewJson = z.infer<typeof breakerView>;

/** What a destination adds to part two's settings: its name and routing. */
const routingFields = {
  name: destinationName.optional().describe("Unique within the endpoint; absent: `destination-<position>`."),
  filter: destinationFilter.nullable().optional(),
  transform: transformSource.nullable().optional(),
  rateLimit: rateLimitSettings.nullable().optional(),
  breaker: breakerSettings.nullable().optional(),
  paused: z.boolean().optional().describe("true holds this destination's deliveries (nothing is sent) until it is false again; then they drain oldest first."),
};

const targetSecretInput = z
  .string()
  .min(1)
  .max(1024)
  .nullable()
  .optional()
  .meta({ writeOnly: true, description: "Set: signatures are recomputed with it (as replay's resign mode); left out: the one set is kept; null removes it." });

/** One destination as a client sends it. With `id`: the stored destination it replaces (a PATCH). */
export const destinationInput = z.strictObject({
  id: uuid.optional().describe("A stored destination of this endpoint, kept under its id; absent: a new destination (its id assigned)."),
  ...destinationSettings.shape,
  targetSecret: targetSecretInput,
  ...routingFields,
});
export type DestinationInput = z.input<typeof destinationInput>;
export type DestinationInputValue = z.output<typeof destinationInput>;

/**
 * The Endpoint's `forward` as a client sends it (design §11): part two's one destination, now
 * shorthand for the first of `destinations` (design §17), so it takes their routing fields too.
 */
export const forwardSettings = destinationSettings.extend({
  targetSecret: targetSecretInput,
  ...routingFields,
});
/** What a client sends. */
export type ForwardSettingsInput = z.input<typeof forwardSettings>;
export type ForwardSettings = z.output<typeof forwardSettings>;

export const destinationsInput = z
  .array(destinationInput)
  .min(1)
  .max(MAX_DESTINATIONS)
  .meta({
    ...extension,
    description: `Where a relay endpoint's captures go, 1 to ${MAX_DESTINATIONS} (design §17): each capture gets one delivery per destination whose filter it matches. A proxy endpoint has exactly one, without a filter.`,
  });

/**
 * A destination as the catalog stores it (an element of the endpoint's forward_json): its
 * settings with their defaults, whether a target secret is set (the secret itself is sealed
 * apart). Unknown keys are ignored: destinations written by a newer version still read.
 */
export const storedDestination = z.object({
  id: z.string(),
  name: z.string(),
  ...destinationSettings.shape,
  targetSecretSet: z.boolean().default(false),
  filter: z.record(z.string(), z.unknown()).optional(),
  transform: z.string().optional(),
  rateLimit: z.object(rateLimitSettings.shape).optional(),
  breaker: z.object(breakerSettings.shape).optional(),
  paused: z.boolean().default(false),
});
export type StoredDestination = z.output<typeof storedDestination>;

/** A destination in the Endpoint (design §17): its settings, never its secret. */
export const destinationView = z
  .object({
    id: uuid,
    name: z.string(),
    url: z.string(),
    keepPath: z.boolean(),
    timeoutMs: z.int(),
    maxAttempts: z.int(),
    targetSecretSet: z.boolean(),
    filter: z.record(z.string(), z.unknown()).optional(),
    transform: z.string().optional(),
    rateLimit: z.object(rateLimitSettings.shape).optional(),
    breaker: breakerView,
    paused: z.boolean(),
  })
  .meta({ ...extension });
export type DestinationViewJson = z.infer<typeof destinationView>;

/** A request as a transform sees and returns it (design §17; @whc/transform-sandbox's TransformRequest). */
export const transformRequestView = z
  .object({
    method: z.string(),
    path: z.string().describe("The sub-path after the webhook URL, from \"/\"."),
    query: z.string().describe("The raw query string, without its \"?\"."),
    headers: z.record(z.string(), z.array(z.string())).describe("Lower-case names, each with its values in order."),
    body: z.unknown().optional().describe("A JSON object or array parsed; any other UTF-8 body as text."),
    bodyBase64: z.string().optional().describe("Instead of body, for a body that is not UTF-8."),
  })
  .meta({ ...extension });
export type TransformRequestJson = z.infer<typeof transformRequestView>;

/** `POST /v1/endpoints/{id}/destinations/test` (design §17): a filter and transform to try on a stored event. */
export const testDestinationRequest = z
  .strictObject({
    destination: z
      .strictObject({ filter: destinationFilter.nullable().optional(), transform: transformSource.nullable().optional() })
      .describe("The filter and transform to try (a destination's own, or new ones): nothing is saved."),
    eventId: uuid.describe("A stored event of the endpoint to try them on."),
  })
  .meta({ ...extension });
export type TestDestinationRequest = z.input<typeof testDestinationRequest>;

export const testDestinationResult = z
  .object({
    matched: z.boolean().describe("Whether the filter matches the event (no filter: always)."),
    request: transformRequestView
      .nullable()
      .describe("What would be sent (the transform's answer, or the capture as stored without one); null when not matched, skipped or failed."),
    error: z.string().nullable().describe("What the transform did wrong (a throw, a timeout, a bad return); null otherwise."),
    durationMs: z.number().describe("How long the transform ran (0 without one)."),
  })
  .meta({ ...extension });
export type TestDestinationResultJson = z.infer<typeof testDestinationResult>;
