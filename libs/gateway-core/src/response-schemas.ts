import { z } from "zod";

/**
 * The response shapes of interface 0.1.0 (no field is required in a response). They feed the
 * OpenAPI document; the e2e suite validates live responses against that document.
 */
const dateTime = z.iso.datetime({ offset: true });
const uuid = z.uuid({ version: undefined });
const extension = { "x-extension": true } as const;

export const endpointResponse = z
  .object({
    id: uuid,
    slug: z.string(),
    displayName: z.string(),
    webhookUrl: z.string(),
    operatingMode: z.string(),
    status: z.string(),
    replayFromDashboard: z.boolean(),
    replayFromApi: z.boolean(),
    provider: z.string(),
    secretSet: z.boolean(),
    genericSignatureHeader: z.string(),
    genericSignaturePrefix: z.string(),
    source: z.string(),
    createdAt: dateTime,
    updatedAt: dateTime,
    eventCount: z.int(),
    lastEventAt: dateTime,
    lastPurgedAt: dateTime,
    purgedEventCount: z.int(),
  })
  .partial()
;

export const endpointListResponse = z.object({ items: z.array(endpointResponse) }).partial();

const decryption = z.enum(["ok", "failed", "metadata_only"]);

const summaryFields = {
  id: uuid,
  endpointId: uuid,
  receivedAt: dateTime,
  method: z.string(),
  canonicalEventType: z.string(),
  provider: z.string(),
  verification: z.string(),
  verificationFailureReason: z.string(),
  responseCode: z.int32(),
  readAt: dateTime,
  truncated: z.boolean(),
  originalSizeBytes: z.int(),
  decryption,
};

export const eventSummaryResponse = z
  .object({ ...summaryFields, searchMatchedTruncated: z.boolean() })
  .partial()
;

export const eventListResponse = z
  .object({
    items: z.array(eventSummaryResponse),
    nextBefore: dateTime,
    nextBeforeId: uuid,
    nextAfter: dateTime,
    nextAfterId: uuid,
    searchExcludedMetadataOnlyCount: z.int32(),
  })
  .partial()
;

export const eventDetailResponse = z
  .object({
    ...summaryFields,
    headers: z.record(z.string(), z.array(z.string())),
    remoteIp: z.string(),
    body: z.string(),
    bodyEncoding: z.enum(["utf8", "base64"]),
    diagnostic: z.record(z.string(), z.unknown()),
    forwardedResponse: z.record(z.string(), z.unknown()),
  })
  .partial()
;

export const curlExportResponse = z
  .object({ command: z.string(), byteIdentical: z.boolean(), bodyOmitted: z.boolean(), headersMasked: z.boolean() })
  .partial()
;

export const replayResponse = z
  .object({
    result: z.enum(["delivered", "rejected", "network_error"]),
    target_status: z.int32(),
    network_failure_reason: z.string(),
    duration_ms: z.int(),
    response_excerpt_base64: z.base64(),
    excerpt_truncated: z.boolean(),
    source_body_truncated: z.boolean(),
    mode: z.enum(["exact", "resign"]),
    target_url: z.string(),
    event_id: uuid,
    audit_id: uuid,
  })
  .partial()
;

export const errorReplyResponse = z
  .object({
    error: z.string(),
    message: z.string(),
    details: z
      .object({
        field: z.string(),
        reason: z.enum(["required", "type", "pattern", "length", "range", "format", "unknown"]),
      })
      .partial(),
    requestId: z.string(),
  })
;

export const healthResponse = z
  .object({ status: z.enum(["ok", "unavailable"]), checks: z.record(z.string(), z.enum(["ok", "down"])) })
  .meta({ ...extension });
