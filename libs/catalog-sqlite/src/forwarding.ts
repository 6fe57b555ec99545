import type Database from "better-sqlite3";
import { begunDelivery, deliveryRecordOf, recordedDelivery, type AuditRecord, type CatalogStore, type DeliveryClaim, type AttemptRecord, type DeliveryRecord } from "@whc/catalog-core";
import { attemptFromRow, attemptRows, attemptToRow, deliveryRows, deliveryUpdate, type Row } from "./rows.js";
import type { AttemptTransition, EventRef } from "@whc/ports";
import type { WriteAudit } from "./audit.js";

export type ForwardMethods = Pick<CatalogStore, "claimDeliveries" | "beginForwardAttempt" | "recordForwardAttempt" | "nextDueAt" | "outboxStats" | "recordProxyAnswer">;

/** An event's attempts, oldest first. */
export type ReadAttempts = (seq: number) => AttemptRecord[];

export function createAttemptReader(db: Database.Database): ReadAttempts {
  const attempts = db.prepare(`SELECT ${attemptRows.columns("a")} FROM forward_attempts a WHERE a.seq = ? ORDER BY a.n`);
  return (seq) => (attempts.all(seq) as Row[]).map(attemptFromRow);
}

/**
 * Claims: parameters owner, claim end, now, now, limit. The subquery walks the partial index
 * events_outbox (forward_next_at, then seq): only pending deliveries are in it.
 */
export const CLAIM_SQL = `UPDATE events
  SET forward_started = forward_started + 1, forward_claim_owner = ?, forward_claim_until = ?
  WHERE seq IN (
    SELECT seq FROM events
    WHERE forward_state = 'pending' AND forward_next_at <= ? AND (forward_claim_until IS NULL OR forward_claim_until <= ?)
    ORDER BY forward_next_at, seq LIMIT ?)
  RETURNING id, endpoint_id, account_id, forward_started, forward_next_at, seq`;

interface ClaimedRow {
  id: string;
  endpoint_id: string;
  account_id: string;
  forward_started: number;
  forward_next_at: number;
  seq: number;
}

/**
 * The relay outbox and the forward attempts. A claim is one UPDATE ... RETURNING in an
 * IMMEDIATE transaction: it holds the file's write lock from its first read, so two stores
 * (threads or processes) on one file never take the same delivery, and each claim moves the
 * attempt counter it answers. Begin and record read the delivery and write what
 * catalog-core's reference functions make of it, in IMMEDIATE transactions too.
 */
export function createForwarding(db: Database.Database, readAttempts: ReadAttempts, writeAudit: WriteAudit): ForwardMethods {
  const stmt = {
    claim: db.prepare(CLAIM_SQL),
    delivery: db.prepare(`SELECT e.seq, ${deliveryRows.columns("e")} FROM events e WHERE e.id = ? AND e.endpoint_id = ? AND e.account_id = ?`),
    update: db.prepare(deliveryUpdate.sql),
    // A repeated record of the same attempt keeps the first and changes nothing.
    insertAttempt: db.prepare(`${attemptRows.insertSql()} ON CONFLICT (seq, n) DO NOTHING`),
    proxyCode: db.prepare("UPDATE events SET response_code = ? WHERE id = ? AND endpoint_id = ? AND account_id = ? RETURNING seq"),
    // A diagnostic that is not JSON (none was stored) stays as it is.
    proxyFailed: db.prepare(
      "UPDATE event_bodies SET diagnostic = json_set(diagnostic, '$.responseSource', 'forward_failed') WHERE seq = ? AND json_valid(diagnostic)",
    ),
    // The partial index events_outbox answers this with one seek.
    nextDue: db.prepare("SELECT min(forward_next_at) AS next FROM events WHERE forward_state = 'pending' AND forward_next_at > ?").pluck(),
    stats: db.prepare(
      "SELECT count(*) AS pending, min(forward_next_at) AS oldest FROM events WHERE forward_state = 'pending' AND forward_next_at IS NOT NULL",
    ),
  };

  const deliveryOf = (ref: EventRef) => stmt.delivery.get(ref.eventId, ref.endpointId, ref.accountId) as Row | undefined;

  const claimTx = db.transaction((owner: string, now: number, claimMs: number, limit: number): DeliveryClaim[] => {
    const rows = stmt.claim.all(owner, now + claimMs, now, now, limit) as ClaimedRow[];
    // RETURNING gives rows in no promised order: oldest due first, as the port says.
    rows.sort((a, b) => a.forward_next_at - b.forward_next_at || a.seq - b.seq);
    return rows.map((r) => ({ accountId: r.account_id, endpointId: r.endpoint_id, eventId: r.id, attempt: r.forward_started }));
  });

  const beginTx = db.transaction((ref: EventRef, target: string): number | undefined => {
    const row = deliveryOf(ref);
    if (!row) return undefined;
    const next = begunDelivery(deliveryRows.read(row), target);
    stmt.update.run(...deliveryUpdate.values(next), row.seq);
    return next.started;
  });

  const recordTx = db.transaction((ref: EventRef, attempt: AttemptRecord, transition: AttemptTransition, audit: AuditRecord | undefined): DeliveryRecord | undefined => {
    const row = deliveryOf(ref);
    if (!row) return undefined;
    const seq = row.seq as number;
    const current = deliveryRows.read(row);
    const { changes } = stmt.insertAttempt.run(attemptRows.values(attemptToRow(seq, attempt)));
    if (changes === 0) return deliveryRecordOf(current, readAttempts(seq));
    writeAudit(audit);
    const next = recordedDelivery(current, attempt, transition);
    stmt.update.run(...deliveryUpdate.values(next), seq);
    return deliveryRecordOf(next, readAttempts(seq));
  });

  const proxyAnswerTx = db.transaction((ref: EventRef, responseCode: number, forwardFailed: boolean): boolean => {
    const row = stmt.proxyCode.get(responseCode, ref.eventId, ref.endpointId, ref.accountId) as { seq: number } | undefined;
    if (!row) return false;
    if (forwardFailed) stmt.proxyFailed.run(row.seq);
    return true;
  });

  return {
    async claimDeliveries(owner, now, claimMs, limit) {
      return claimTx.immediate(owner, now, claimMs, limit);
    },

    async beginForwardAttempt(ref, target) {
      return beginTx.immediate(ref, target);
    },

    async recordForwardAttempt(ref, attempt, transition, audit) {
      return recordTx.immediate(ref, attempt, transition, audit);
    },

    async nextDueAt(after) {
      return (stmt.nextDue.get(after) as number | null) ?? undefined;
    },

    async outboxStats() {
      const { pending, oldest } = stmt.stats.get() as { pending: number; oldest: number | null };
      return { pending, oldestDueAt: oldest ?? undefined };
    },

    async recordProxyAnswer(ref, responseCode, forwardFailed) {
      return proxyAnswerTx.immediate(ref, responseCode, forwardFailed);
    },
  };
}
