import { z } from "zod";
import { dateTime, extension, uuid } from "./common.js";
import { pageLimit, requireCursorPairs } from "./events.js";
import { SLUG_PATTERN } from "./values.js";
import { AUDIT_ACTIONS } from "./values.js";

/** Entries are kept this many days (WHC_AUDIT_RETENTION_DAYS) unless configured otherwise. */
export const AUDIT_RETENTION_DAYS = 365;
/** The largest `details` an entry keeps, as JSON text. */
export const AUDIT_DETAILS_MAX_BYTES = 4096;

export const auditEntry = z
  .object({
    id: uuid,
    at: dateTime,
    action: z.enum(AUDIT_ACTIONS),
    keyId: uuid.describe("The API key that acted."),
    keyPrefix: z.string().describe("Its first characters, as the key list shows them."),
    remoteIp: z.string().describe("The address the request came from (the gateway's peer)."),
    requestId: z.string().describe("The request's `X-Request-Id`."),
    endpointId: uuid.nullable(),
    eventId: uuid.nullable(),
    details: z
      .record(z.string(), z.unknown())
      .describe(
        "What the action adds, never a body or a secret: `fields` (endpoint.updated), `unmasked` (event.curl_exported), " +
          "`count` and `complete` (events.exported), `audit_id`, `result`, `mode`, `target` (the origin) and, for an edited replay, `edited` (the header names set and removed, and the body edit's kind; event.replayed), " +
          "`attempt` and `status` (event.redelivered), `jobId`, `filter` and `total` (redelivery.started), `jobId`, `queued` (redelivery.canceled), `eventType` (event.triggered), the key's `id`, `prefix`, `name` and " +
          "`scopes` (key.created, key.revoked), `sha256`, `total`, `applied`, `complete`, the counts and first slugs of what " +
          "was `created`, `updated` and `deleted` (config.applied).",
      ),
  })
  .meta({ ...extension });
export type AuditEntryJson = z.infer<typeof auditEntry>;

export const auditList = z
  .object({
    items: z.array(auditEntry),
    nextBefore: dateTime.optional(),
    nextBeforeId: uuid.optional(),
    nextAfter: dateTime.optional(),
    nextAfterId: uuid.optional(),
  })
  .meta({ ...extension });
export type AuditListJson = z.infer<typeof auditList>;

/** `GET /v1/audit`'s query: the events list's cursors and page size, and the log's own filters. */
export const listAuditQuery = z
  .strictObject({
    before: dateTime.optional().describe("Cursor: the page strictly older than (before, beforeId). Needs beforeId."),
    beforeId: uuid.optional().describe("Cursor pair of `before`."),
    after: dateTime.optional().describe("Cursor: the `limit` entries strictly newer than (after, afterId), closest to it. Needs afterId."),
    afterId: uuid.optional().describe("Cursor pair of `after`."),
    limit: pageLimit,
    action: z.enum(AUDIT_ACTIONS).optional().describe("action equals."),
    keyId: uuid.optional().describe("Only what this API key did."),
    endpointId: uuid.optional().describe("Only entries about this endpoint (and its events)."),
    eventId: uuid.optional().describe("Only entries about this event: its history (read, exported, replayed, redelivered, deleted). Needs endpointId."),
    from: dateTime.optional().describe("at >= from (inclusive)."),
    to: dateTime.optional().describe("at < to (exclusive)."),
  })
  .superRefine((q, ctx) => {
    requireCursorPairs(q, ctx);
    // An event's history is read within its endpoint's entries (their index), never by a scan of the account's log.
    if (q.eventId !== undefined && q.endpointId === undefined) {
      ctx.addIssue({ code: "invalid_type", expected: "string", path: ["endpointId"], message: "endpointId is required with eventId" });
    }
  });
export type ListAuditQueryText = z.input<typeof listAuditQuery>;
export type ListAuditQuery = z.output<typeof listAuditQuery>;

/** Slugs of each kind one config.applied entry names; the rest are counted only. */
export const CONFIG_APPLIED_SLUGS = 10;
const slugList = z.array(z.string().regex(SLUG_PATTERN)).max(10_000);

/**
 * `POST /v1/audit/config-applied` (design §15's config.applied): what one `whc apply` run changed,
 * recorded by whc at its end, beside the endpoint.created|updated|deleted entries of each change.
 */
export const configAppliedRequest = z
  .strictObject({
    sha256: z.string().regex(/^[0-9a-f]{64}$/, "64 lower-case hex digits").describe("SHA-256 of the file applied, as read."),
    total: z.int().min(0).max(30_000).describe("Changes the plan held."),
    applied: z.int().min(0).max(30_000).describe("Changes made (fewer than total when a refusal stopped the run)."),
    created: slugList.default([]).describe("Slugs of the endpoints created."),
    updated: slugList.default([]).describe("Slugs of the endpoints updated."),
    deleted: slugList.default([]).describe("Slugs of the endpoints deleted."),
  })
  .refine((r) => r.applied <= r.total, { message: "applied is at most total", path: ["applied"] })
  .meta({ ...extension });
export type ConfigAppliedRequest = z.input<typeof configAppliedRequest>;
