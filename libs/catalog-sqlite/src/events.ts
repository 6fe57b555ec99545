import type Database from "better-sqlite3";
import type { AuditRecord, CatalogStore } from "@whc/catalog-core";
import type { WriteAudit } from "./audit.js";
import { isStoreUnavailable } from "./errors.js";
import type { ReadDeliveries } from "./forwarding.js";
import { bodyRows, eventFromRow, summaryRows, type Row } from "./rows.js";

export type EventMethods = Pick<CatalogStore, "getEvent" | "deleteEvent">;

/** Removes one event's rows: its search postings, its body, its deliveries and their attempts, and its summary. */
export type RemoveEvent = (seq: number) => void;

export function createEventRemoval(db: Database.Database): RemoveEvent {
  const stmt = {
    deleteSearch: db.prepare("DELETE FROM event_search WHERE rowid = ?"),
    deleteBody: db.prepare("DELETE FROM event_bodies WHERE seq = ?"),
    deleteAttempts: db.prepare("DELETE FROM delivery_attempts WHERE seq = ?"),
    deleteDeliveries: db.prepare("DELETE FROM deliveries WHERE seq = ?"),
    deleteEvent: db.prepare("DELETE FROM events WHERE seq = ?"),
  };
  return function removeEvent(seq) {
    stmt.deleteSearch.run(seq);
    stmt.deleteBody.run(seq);
    stmt.deleteAttempts.run(seq);
    stmt.deleteDeliveries.run(seq);
    stmt.deleteEvent.run(seq);
  };
}

/** One event at a time: read it whole (marking it read), delete it. */
export function createEvents(db: Database.Database, removeEvent: RemoveEvent, readDeliveries: ReadDeliveries, writeAudit: WriteAudit): EventMethods {
  const stmt = {
    whole: db.prepare(`SELECT e.seq, ${summaryRows.columns("e")}, ${bodyRows.columns("b")}, e.schema_drift
      FROM events e JOIN event_bodies b ON b.seq = e.seq WHERE e.id = ? AND e.endpoint_id = ? AND e.account_id = ?`),
    // Scoped like the read itself: a foreign account's request for the id must change nothing.
    markRead: db.prepare("UPDATE events SET read_at = ? WHERE id = ? AND endpoint_id = ? AND account_id = ? AND read_at IS NULL"),
    seqOf: db.prepare("SELECT seq FROM events WHERE id = ? AND endpoint_id = ? AND account_id = ?"),
    dropEndpointCount: db.prepare("UPDATE endpoints SET event_count = max(event_count - ?, 0) WHERE id = ?"),
  };

  const getTx = db.transaction((accountId: string, endpointId: string, eventId: string, markReadAt?: number, audit?: AuditRecord) => {
    if (markReadAt !== undefined) stmt.markRead.run(markReadAt, eventId, endpointId, accountId);
    const row = stmt.whole.get(eventId, endpointId, accountId) as Row | undefined;
    if (!row) return undefined;
    writeAudit(audit);
    // Read in the same transaction: the attempts agree with the deliveries' states.
    return { ...eventFromRow(row), deliveries: readDeliveries(row.seq as number) };
  });

  const deleteTx = db.transaction((accountId: string, endpointId: string, eventId: string, audit: AuditRecord | undefined) => {
    const row = stmt.seqOf.get(eventId, endpointId, accountId) as { seq: number } | undefined;
    if (!row) return false;
    removeEvent(row.seq);
    stmt.dropEndpointCount.run(1, endpointId);
    writeAudit(audit);
    return true;
  });

  return {
    async getEvent(accountId, endpointId, eventId, markReadAt, audit) {
      if (markReadAt === undefined && audit === undefined) return getTx(accountId, endpointId, eventId);
      try {
        return getTx.immediate(accountId, endpointId, eventId, markReadAt, audit);
      } catch (err) {
        // A full disk (or a read-only file) refuses the readAt mark, not the read: the event
        // is shown as stored, and the first read once the store takes writes again marks it.
        // An audited read is refused instead: nothing is read without its entry (ADR 0053).
        if (audit !== undefined || markReadAt === undefined || !isStoreUnavailable(err)) throw err;
        return getTx(accountId, endpointId, eventId);
      }
    },

    async deleteEvent(accountId, endpointId, eventId, audit) {
      return deleteTx.immediate(accountId, endpointId, eventId, audit);
    },
  };
}
