import type { AuditEntry } from "@whc/contracts";
import type { AuditAction, AuditEntryJson } from "../index.js";
import { isoTime } from "./json.js";

/** An entry of the audit log as `GET /v1/audit` shows it. */
export function auditEntryJson(e: AuditEntry): AuditEntryJson {
  return {
    id: e.id,
    at: isoTime(e.atMs),
    action: e.action as AuditAction,
    keyId: e.keyId,
    keyPrefix: e.keyPrefix,
    remoteIp: e.remoteIp,
    requestId: e.requestId,
    endpointId: e.endpointId || null,
    eventId: e.eventId || null,
    details: e.detailsJson ? (JSON.parse(e.detailsJson) as Record<string, unknown>) : {},
  };
}
