import type { ServiceImpl } from "@connectrpc/connect";
import type { AuditContext, AuditEntry, CatalogService } from "@whc/contracts";
import { AUDIT_ACTIONS, AUDIT_DETAILS_MAX_BYTES } from "@whc/api-model";
import { validationFailed } from "@whc/errors";
import type { CatalogStore } from "./ports.js";
import type { AuditCursor, AuditRecord } from "./types.js";
import { newId, requireUuid } from "./ids.js";

/** The largest page of the audit log one call answers (the gateway asks for at most 200). */
const MAX_AUDIT_PAGE = 1000;

/** A JSON object of at most AUDIT_DETAILS_MAX_BYTES, or nothing. */
function detailsOf(json: string, field: string): Record<string, unknown> {
  if (!json) return {};
  if (Buffer.byteLength(json) > AUDIT_DETAILS_MAX_BYTES) throw validationFailed(field, "length");
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw validationFailed(field, "format");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw validationFailed(field, "type");
  return parsed as Record<string, unknown>;
}

function requireAction(action: string, field: string): string {
  if (!(AUDIT_ACTIONS as readonly string[]).includes(action)) throw validationFailed(field, "unknown");
  return action;
}

/**
 * The entry a call made for an API key writes with its action (ADR 0053); undefined for an
 * internal call, which carries no context. `details` the call adds itself win over the caller's.
 */
export function auditEntryOf(
  context: AuditContext | undefined,
  entry: { accountId: string; action: string; at: number; endpointId?: string | undefined; eventId?: string | undefined; details?: Record<string, unknown> },
): AuditRecord | undefined {
  if (!context) return undefined;
  requireUuid("audit.key_id", context.keyId);
  return {
    id: newId(),
    accountId: entry.accountId,
    at: entry.at,
    action: requireAction(entry.action, "audit.action"),
    keyId: context.keyId,
    keyPrefix: context.keyPrefix,
    remoteIp: context.remoteIp,
    requestId: context.requestId,
    endpointId: entry.endpointId || undefined,
    eventId: entry.eventId || undefined,
    details: { ...detailsOf(context.detailsJson, "audit.details_json"), ...entry.details },
  };
}

export function auditToProto(e: AuditRecord): Omit<AuditEntry, "$typeName"> {
  return {
    id: e.id,
    accountId: e.accountId,
    atMs: BigInt(e.at),
    action: e.action,
    keyId: e.keyId,
    keyPrefix: e.keyPrefix,
    remoteIp: e.remoteIp,
    requestId: e.requestId,
    endpointId: e.endpointId ?? "",
    eventId: e.eventId ?? "",
    detailsJson: JSON.stringify(e.details),
  };
}

function cursorOf(c: { atMs: bigint; id: string } | undefined, field: string): AuditCursor | undefined {
  if (!c) return undefined;
  requireUuid(`${field}.id`, c.id);
  return { at: Number(c.atMs), id: c.id };
}

/** The audit log's own calls: an entry written by itself, the pages, the retention purge. */
export function auditMethods(store: CatalogStore, now: () => number): Pick<ServiceImpl<typeof CatalogService>, "recordAudit" | "listAudit" | "purgeAudit"> {
  return {
    async recordAudit(req) {
      if (!req.accountId) throw validationFailed("account_id", "required");
      if (!req.context) throw validationFailed("context", "required");
      if (req.endpointId) requireUuid("endpoint_id", req.endpointId);
      if (req.eventId) requireUuid("event_id", req.eventId);
      const entry = auditEntryOf(req.context, { accountId: req.accountId, action: req.action, at: now(), endpointId: req.endpointId, eventId: req.eventId })!;
      await store.recordAudit(entry);
      return { id: entry.id };
    },

    async listAudit(req) {
      if (!req.accountId) throw validationFailed("account_id", "required");
      if (req.action !== undefined) requireAction(req.action, "action");
      if (req.keyId !== undefined) requireUuid("key_id", req.keyId);
      if (req.endpointId !== undefined) requireUuid("endpoint_id", req.endpointId);
      if (req.eventId !== undefined) requireUuid("event_id", req.eventId);
      const page = await store.listAudit({
        accountId: req.accountId,
        before: cursorOf(req.before, "before"),
        after: cursorOf(req.after, "after"),
        fromMs: req.fromMs === undefined ? undefined : Number(req.fromMs),
        toMs: req.toMs === undefined ? undefined : Number(req.toMs),
        action: req.action,
        keyId: req.keyId?.toLowerCase(),
        endpointId: req.endpointId?.toLowerCase(),
        eventId: req.eventId?.toLowerCase(),
        limit: Math.min(Math.max(req.limit || 50, 1), MAX_AUDIT_PAGE),
      });
      return { entries: page.entries.map(auditToProto), hasOlder: page.hasOlder };
    },

    async purgeAudit(req) {
      return { purged: BigInt(await store.purgeAudit(Number(req.beforeMs))) };
    },
  };
}
