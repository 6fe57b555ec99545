import type Database from "better-sqlite3";
import {
  NEVER_FORWARDED,
  aggregateOf,
  begunDelivery,
  deliveryRecordOf,
  endedOutcome,
  jobAfterEnded,
  recordedDelivery,
  type AuditRecord,
  type CatalogStore,
  type DeliveryClaim,
  type AttemptRecord,
  type DeliveryProgress,
  type DeliveryRecord,
  type RecordedAttempt,
} from "@whc/catalog-core";
import type { DeliveryState } from "@whc/api-model";
import { DELIVERY_UPSERT_SQL, attemptFromRow, attemptRows, attemptToRow, deliveryRow, deliveryRows, redeliveryJobFromRow, type Row } from "./rows.js";
import type { AttemptTransition, DeliveryRef, EventRef } from "@whc/ports";
import type { WriteAudit } from "./audit.js";

export type ForwardMethods = Pick<CatalogStore, "claimDeliveries" | "beginForwardAttempt" | "recordForwardAttempt" | "nextDueAt" | "outboxStats" | "recordProxyAnswer">;

/** An event's deliveries with their attempts, in the order they were made. */
export type ReadDeliveries = (seq: number) => DeliveryRecord[];

export function createDeliveryReader(db: Database.Database): ReadDeliveries {
  const deliveries = db.prepare(`SELECT ${deliveryRows.columns("d")} FROM deliveries d WHERE d.seq = ? ORDER BY d.id`);
  const attempts = db.prepare(`SELECT ${attemptRows.columns("a")} FROM delivery_attempts a WHERE a.seq = ? ORDER BY a.destination_id, a.n`);
  return (seq) => {
    const rows = deliveries.all(seq) as Row[];
    if (rows.length === 0) return [];
    const byDestination = new Map<string, AttemptRecord[]>();
    for (const row of attempts.all(seq) as Row[]) {
      const list = byDestination.get(row.destination_id as string) ?? [];
      list.push(attemptFromRow(row));
      byDestination.set(row.destination_id as string, list);
    }
    return rows.flatMap((row) => {
      const d = deliveryRows.read(row);
      const record = deliveryRecordOf(d.destinationId, d, byDestination.get(d.destinationId) ?? []);
      return record ? [record] : [];
    });
  };
}

/**
 * Claims: parameters owner, claim end, claim end, now, limit. The subquery walks the partial
 * index deliveries_outbox (claimable_at, then seq): only deliveries in the outbox are in it,
 * and claimable_at says when each can be claimed; the claim moves it to the claim's end.
 */
export const CLAIM_SQL = `UPDATE deliveries
  SET started = started + 1, claim_owner = ?, claim_until = ?, claimable_at = max(next_at, ?)
  WHERE id IN (
    SELECT id FROM deliveries WHERE claimable_at IS NOT NULL AND claimable_at <= ?
    ORDER BY claimable_at, seq LIMIT ?)
  RETURNING seq, destination_id, started, next_at, id, bulk_job_id, attempt_base`;

interface ClaimedRow {
  seq: number;
  destination_id: string;
  started: number;
  next_at: number;
  id: number;
  bulk_job_id: string | null;
  attempt_base: number;
}

/**
 * The relay outbox and the attempts, one delivery per event and destination (design §17). A
 * claim is one UPDATE ... RETURNING in an IMMEDIATE transaction: it holds the file's write lock
 * from its first read, so two stores (threads or processes) on one file never take the same
 * delivery, and each claim moves the attempt counter it answers. Begin and record read the
 * delivery and write what catalog-core's reference functions make of it, then the event's
 * aggregate state, in IMMEDIATE transactions too.
 */
export function createForwarding(db: Database.Database, readDeliveries: ReadDeliveries, writeAudit: WriteAudit): ForwardMethods {
  const stmt = {
    claim: db.prepare(CLAIM_SQL),
    eventOfSeq: db.prepare("SELECT id, endpoint_id, account_id FROM events WHERE seq = ?"),
    seqOf: db.prepare("SELECT seq FROM events WHERE id = ? AND endpoint_id = ? AND account_id = ?"),
    delivery: db.prepare(`SELECT ${deliveryRows.columns("d")} FROM deliveries d WHERE d.seq = ? AND d.destination_id = ?`),
    states: db.prepare("SELECT state FROM deliveries WHERE seq = ?").pluck(),
    upsert: db.prepare(DELIVERY_UPSERT_SQL),
    aggregate: db.prepare("UPDATE events SET forward_state = ? WHERE seq = ?"),
    // A repeated record of the same attempt keeps the first and changes nothing.
    insertAttempt: db.prepare(`${attemptRows.insertSql()} ON CONFLICT (seq, destination_id, n) DO NOTHING`),
    attempts: db.prepare(`SELECT ${attemptRows.columns("a")} FROM delivery_attempts a WHERE a.seq = ? AND a.destination_id = ? ORDER BY a.n`),
    proxyCode: db.prepare("UPDATE events SET response_code = ? WHERE id = ? AND endpoint_id = ? AND account_id = ? RETURNING seq"),
    // A diagnostic that is not JSON (none was stored) stays as it is.
    proxyFailed: db.prepare(
      "UPDATE event_bodies SET diagnostic = json_set(diagnostic, '$.responseSource', 'forward_failed') WHERE seq = ? AND json_valid(diagnostic)",
    ),
    // The partial index deliveries_outbox answers this with one seek.
    nextDue: db.prepare("SELECT min(claimable_at) AS next FROM deliveries WHERE claimable_at IS NOT NULL AND claimable_at > ?").pluck(),
    stats: db.prepare("SELECT count(*) AS pending, min(next_at) AS oldest FROM deliveries WHERE state = 'pending' AND next_at IS NOT NULL"),
    bulkJobOf: db.prepare("SELECT bulk_job_id FROM deliveries WHERE seq = ? AND destination_id = ?").pluck(),
    job: db.prepare("SELECT * FROM redelivery_jobs WHERE id = ?"),
    jobCounts: db.prepare(
      "UPDATE redelivery_jobs SET done = ?, failed = ?, state = ?, total = ?, updated_at = ?, finished_at = ?, lease_owner = ?, lease_until = ? WHERE id = ?",
    ),
  };

  const seqOf = (ref: EventRef) => (stmt.seqOf.get(ref.eventId, ref.endpointId, ref.accountId) as { seq: number } | undefined)?.seq;
  const progressOf = (seq: number, destinationId: string): DeliveryProgress => {
    const row = stmt.delivery.get(seq, destinationId) as Row | undefined;
    return row ? deliveryRows.read(row) : NEVER_FORWARDED;
  };
  const write = (seq: number, destinationId: string, p: DeliveryProgress) => stmt.upsert.run(deliveryRows.values(deliveryRow(seq, destinationId, p)));
  /** The event's aggregate state after one of its deliveries moved. */
  const reaggregate = (seq: number): DeliveryState | undefined => {
    const state = aggregateOf((stmt.states.all(seq) as DeliveryState[]).map((s) => ({ state: s })));
    stmt.aggregate.run(state ?? null, seq);
    return state;
  };
  /** A delivery a bulk redelivery put back that this attempt ended counts for its job, in the record's transaction (ADR 0089). */
  const countForJob = (seq: number, destinationId: string, before: DeliveryProgress, after: DeliveryProgress, attempt: AttemptRecord) => {
    const outcome = endedOutcome(before.state, after.state);
    if (!outcome) return;
    const jobId = stmt.bulkJobOf.get(seq, destinationId) as string | null | undefined;
    const row = jobId ? (stmt.job.get(jobId) as Row | undefined) : undefined;
    if (!row) return;
    const job = jobAfterEnded(redeliveryJobFromRow(row), outcome, attempt.at + attempt.durationMs);
    stmt.jobCounts.run(job.done, job.failed, job.state, job.total, job.updatedAt, job.finishedAt ?? null, job.leaseOwner ?? null, job.leaseUntil ?? null, job.id);
  };
  const attemptsOf = (seq: number, destinationId: string) => (stmt.attempts.all(seq, destinationId) as Row[]).map(attemptFromRow);

  const claimTx = db.transaction((owner: string, now: number, claimMs: number, limit: number): DeliveryClaim[] => {
    const rows = stmt.claim.all(owner, now + claimMs, now + claimMs, now, limit) as ClaimedRow[];
    // RETURNING gives rows in no promised order: oldest due first, as the port says.
    rows.sort((a, b) => a.next_at - b.next_at || a.seq - b.seq || a.id - b.id);
    return rows.map((r) => {
      const e = stmt.eventOfSeq.get(r.seq) as { id: string; endpoint_id: string; account_id: string };
      const claim: DeliveryClaim = { accountId: e.account_id, endpointId: e.endpoint_id, eventId: e.id, destinationId: r.destination_id, attempt: r.started };
      // A delivery a bulk redelivery put back: its attempts are the job's (ADR 0089).
      return r.bulk_job_id === null ? claim : { ...claim, bulkJobId: r.bulk_job_id, attemptBase: r.attempt_base };
    });
  });

  const beginTx = db.transaction((ref: DeliveryRef, target: string): number | undefined => {
    const seq = seqOf(ref);
    if (seq === undefined) return undefined;
    const next = begunDelivery(progressOf(seq, ref.destinationId), target);
    write(seq, ref.destinationId, next);
    reaggregate(seq);
    return next.started;
  });

  const recordTx = db.transaction((ref: DeliveryRef, attempt: AttemptRecord, transition: AttemptTransition, audit: AuditRecord | undefined): RecordedAttempt | undefined => {
    const seq = seqOf(ref);
    if (seq === undefined) return undefined;
    const current = progressOf(seq, ref.destinationId);
    const { changes } = stmt.insertAttempt.run(attemptRows.values(attemptToRow(seq, ref.destinationId, attempt)));
    let after = current;
    if (changes > 0) {
      writeAudit(audit);
      after = recordedDelivery(current, attempt, transition);
      write(seq, ref.destinationId, after);
      countForJob(seq, ref.destinationId, current, after, attempt);
    }
    const forwardState = reaggregate(seq);
    const delivery = deliveryRecordOf(ref.destinationId, after, attemptsOf(seq, ref.destinationId));
    // Recorded or kept, the delivery exists now, and so does the aggregate.
    return delivery && forwardState ? { delivery, forwardState } : undefined;
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
