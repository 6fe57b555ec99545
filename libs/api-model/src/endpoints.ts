import { z } from "zod";
import { ENDPOINT_PAGE_DEFAULT, ENDPOINT_PAGE_MAX, ENDPOINT_STATUSES, OPERATING_MODES, SLUG_PATTERN } from "./values.js";
import { dateTime, extension, headerName, providerName, uuid, warning } from "./common.js";
import { endpointResponseConfig } from "./responses.js";
import { forwardView } from "./forwarding.js";
import { destinationView, destinationsInput, forwardSettings } from "./destinations.js";
import { inboundSettings, inboundView } from "./inbound.js";
import { redactSettings } from "./redaction.js";
import { dedupeSettings } from "./dedupe.js";

/** The Endpoint of interface 0.1.0 as the gateway answers it. */
export const endpoint = z.object({
  warnings: z
    .array(warning)
    .optional()
    .meta({
      ...extension,
      description: "Create and update only: what the server noticed that did not stop the change (`dns_failure`: the forward URL's host does not resolve now).",
    }),
  id: uuid,
  slug: z.string(),
  displayName: z.string(),
  webhookUrl: z.string(),
  operatingMode: z.enum(OPERATING_MODES),
  status: z.enum(ENDPOINT_STATUSES),
  replayFromDashboard: z.boolean(),
  replayFromApi: z.boolean(),
  provider: z.string(),
  secretSet: z.boolean(),
  genericSignatureHeader: z.string().optional(),
  genericSignaturePrefix: z.string().optional(),
  source: z.string(),
  createdAt: dateTime,
  updatedAt: dateTime,
  eventCount: z.int(),
  lastEventAt: dateTime.optional(),
  lastPurgedAt: dateTime.optional(),
  purgedEventCount: z.int(),
  secretRotatedAt: dateTime.optional().meta({ ...extension, description: "When the secret last changed; the previous one verifies for WHC_SECRET_GRACE_S after it." }),
  response: endpointResponseConfig.optional().meta({ ...extension, description: "What the endpoint answers; absent: 200 with the event id." }),
  forward: forwardView
    .optional()
    .meta({ ...extension, description: "Where relay and proxy endpoints forward: the first of `destinations` (part two's shape); absent: nowhere." }),
  destinations: z
    .array(destinationView)
    .optional()
    .meta({ ...extension, description: "Where relay (and proxy) endpoints forward, each with its filter and transform (design §17); absent: nowhere." }),
  inbound: inboundView.optional(),
  rejectedCount: z.int().meta({ ...extension, description: "Requests the inbound protection refused (401, 403, 405), none of them stored." }),
  redact: redactSettings.optional().meta({ ...extension, description: "What is replaced before a capture is stored (design §16); absent: nothing." }),
  dedupe: dedupeSettings.optional().meta({ ...extension, description: "Deduplication of the endpoint's captures (design §17); absent: none." }),
});
export type EndpointJson = z.infer<typeof endpoint>;

export const endpointList = z.object({
  items: z.array(endpoint),
  nextAfter: uuid
    .optional()
    .meta({ ...extension, description: "The last id of this page, present only when more endpoints follow: the next page's `after`." }),
});
export type EndpointListJson = z.infer<typeof endpointList>;

/**
 * `GET /v1/endpoints`'s query (design §14): pages by id ascending. Other parameters are
 * ignored, as they were before paging.
 */
export const listEndpointsQuery = z.object({
  limit: z
    .string()
    .regex(/^\d{1,4}$/)
    .transform(Number)
    .pipe(z.number().int().min(1).max(ENDPOINT_PAGE_MAX))
    .optional()
    .meta({ ...extension, description: `Page size, 1-${ENDPOINT_PAGE_MAX}, default ${ENDPOINT_PAGE_DEFAULT}.` }),
  after: uuid.optional().meta({
    ...extension,
    description: "Cursor: the endpoints whose ids follow this endpoint id (the previous page's `nextAfter`; it need not exist any more).",
  }),
});
/** What a client sends: every parameter as text. */
export type ListEndpointsQueryText = z.input<typeof listEndpointsQuery>;

/** Operation 2's body. Unknown fields are refused (`reason: unknown`). */
export const createEndpointRequest = z.strictObject({
  slug: z.string().regex(SLUG_PATTERN).optional(),
  displayName: z.string().min(1).max(100).optional(),
  operatingMode: z.enum(OPERATING_MODES).optional(),
  status: z.enum(ENDPOINT_STATUSES).optional(),
  replayFromDashboard: z.boolean().optional(),
  replayFromApi: z.boolean().optional(),
  genericSignatureHeader: headerName.optional(),
  genericSignaturePrefix: z.string().max(100).optional(),
  provider: providerName.optional().meta({ ...extension }),
  secret: z.string().min(1).max(1024).optional().meta({ ...extension, writeOnly: true }),
  response: endpointResponseConfig.optional().meta({ ...extension }),
  forward: forwardSettings
    .optional()
    .meta({ ...extension, description: "Needed by operatingMode relay and proxy (or `destinations`): shorthand for one destination." }),
  destinations: destinationsInput.optional(),
  inbound: inboundSettings.optional(),
  redact: redactSettings.optional(),
  dedupe: dedupeSettings.optional().meta({ ...extension, description: "Refused on a proxy endpoint (reason unsupported): its sender gets the destination's answer." }),
});
/** What a client sends (before defaults). */
export type CreateEndpointRequest = z.input<typeof createEndpointRequest>;

/**
 * `PATCH /v1/endpoints/{id}` (docs/design.md §9): a field given replaces the stored one; `null`
 * removes `secret`, `response`, `forward` (with `destinations`), `redact` or `dedupe`. `slug` cannot change.
 */
export const updateEndpointRequest = z
  .strictObject({
    slug: z
      .custom<never>(() => false, { message: "slug cannot change", params: { reason: "immutable" } })
      .optional()
      .meta({ description: "Cannot change: giving it is refused with reason `immutable`." }),
    displayName: z.string().min(1).max(100).optional(),
    status: z.enum(ENDPOINT_STATUSES).optional(),
    operatingMode: z.enum(OPERATING_MODES).optional(),
    replayFromDashboard: z.boolean().optional(),
    replayFromApi: z.boolean().optional(),
    provider: providerName.optional(),
    secret: z.string().min(1).max(1024).nullable().optional().meta({ writeOnly: true }),
    genericSignatureHeader: headerName.optional(),
    genericSignaturePrefix: z.string().max(100).optional(),
    response: endpointResponseConfig.nullable().optional(),
    forward: forwardSettings.nullable().optional().meta({
      description:
        "Replaces the first destination's url, keepPath, timeoutMs and maxAttempts (a targetSecret, name, filter or transform left out is kept); the other destinations stay. null removes every destination.",
    }),
    destinations: destinationsInput.nullable().optional().meta({
      description:
        "Replaces the destinations: one with the `id` of a stored destination keeps that id (and its targetSecret when none is given); one without an id is new. null removes every destination.",
    }),
    inbound: inboundSettings
      .nullable()
      .optional()
      .meta({ description: "Replaces the inbound protection (a password or token value left out is kept when one is set); null removes it." }),
    redact: redactSettings.nullable().optional().meta({ description: "Replaces the redaction settings; null removes them. Captures stored before keep what they were stored with." }),
    dedupe: dedupeSettings
      .nullable()
      .optional()
      .meta({ description: "Replaces the deduplication settings; null removes them. Refused on a proxy endpoint (reason unsupported). Keys already seen stay until their window ends." }),
  })
  .meta({ ...extension });
export type UpdateEndpointRequest = z.input<typeof updateEndpointRequest>;
