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
  type BreakerNotice,
  type CatalogStore,
  type ClaimOutcome,
  type AttemptRecord,
  type DeliveryProgress,
  type DeliveryRecord,
  type RecordedAttempt,
} from "@whc/catalog-core";
import type { DeliveryState } from "@whc/api-model";
import { DELIVERY_UPSERT_SQL, attemptFromRow, attemptRows, attemptToRow, deliveryRow, deliveryRows, redeliveryJobFromRow, type Row } from "./rows.js";
import type { AttemptTransition, DeliveryRef, EventRef } from "@whc/ports";
import type { WriteAudit } from "./audit.js";
import { createDeliveryControl } from "./delivery-control.js";

export type ForwardMethods = Pick<
  CatalogStore,
  | "claimDeliveries"
  | "beginForwardAttempt"
  | "recordForwardAttempt"
  | "nextDueAt"
  | "outboxStats"
  | "recordProxyAnswer"
  | "destinationBreakers"
  | "settleDestinations"
  | "activeBreakers"
>;

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
 * The relay outbox and the attempts, one delivery per event and destination (design §17). A
 * claim runs in an IMMEDIATE transaction: it holds the file's write lock from its first read,
 * so two stores (threads or processes) on one file never take the same delivery, and each claim
 * moves the attempt counter it answers; delivery control (design §18) decides in it which due
 * delivery goes, waits, or is held (delivery-control.ts). Begin and record read the delivery
 * and write what catalog-core's reference functions make of it, then the event's aggregate
 * state, in IMMEDIATE transactions too; a record moves its destination's breaker in its own.
 */
export function createForwarding(db: Database.Database, readDeliveries: ReadDeliveries, writeAudit: WriteAudit): ForwardMethods {
  const control = createDeliveryControl(db);
  const stmt = {
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

  const claimTx = db.transaction((owner: string, now: number, claimMs: number, limit: number): ClaimOutcome => control.claim(owner, now, claimMs, limit));
  const settleTx = db.transaction((endpointId: string, now: number) => control.settle(endpointId, now));

  const beginTx = db.transaction((ref: DeliveryRef, target: string): number | undefined => {
    const seq = seqOf(ref);
    if (seq === undefined) return undefined;
    const next = begunDelivery(progressOf(seq, ref.destinationId), target);
    write(seq, ref.destinationId, next);
    reaggregate(seq);
    return next.started;
  });

  const recordTx = db.transaction(
    (ref: DeliveryRef, attempt: AttemptRecord, transition: AttemptTransition, audit: AuditRecord | undefined, now: number): RecordedAttempt | undefined => {
      const seq = seqOf(ref);
      if (seq === undefined) return undefined;
      const current = progressOf(seq, ref.destinationId);
      const { changes } = stmt.insertAttempt.run(attemptRows.values(attemptToRow(seq, ref.destinationId, attempt)));
      let after = current;
      let breaker: BreakerNotice | undefined;
      if (changes > 0) {
        writeAudit(audit);
        const recording = control.recording(ref, ref.endpointId, current, attempt, transition, now);
        after = recordedDelivery(current, attempt, recording.transition);
        write(seq, ref.destinationId, after);
        countForJob(seq, ref.destinationId, current, after, attempt);
        breaker = recording.commit(after);
      }
      const forwardState = reaggregate(seq);
      const delivery = deliveryRecordOf(ref.destinationId, after, attemptsOf(seq, ref.destinationId));
      // Recorded or kept, the delivery exists now, and so does the aggregate.
      return delivery && forwardState ? { delivery, forwardState, ...(breaker ? { breaker } : {}) } : undefined;
    },
  );

  /**
   * Forwarding's writes committed together (ADR 0097, ADR 0098): every begin, record and proxy
   * answer asked for while the thread was busy is made in one transaction, each in a savepoint
   * of its own (better-sqlite3 nests a transaction function as one), so a write that fails is
   * undone alone and the others still commit. One commit, one fsync and one write of the pages
   * they share, instead of one each; a write's answer comes after the commit that holds it, and
   * a failed commit fails every write in it. Writes run in the order they were asked for.
   */
  interface Queued {
    run: () => unknown;
    resolve: (value: never) => void;
    reject: (err: unknown) => void;
    outcome?: { ok: true; value: unknown } | { ok: false; error: unknown };
  }
  let queued: Queued[] = [];
  const commitAllTx = db.transaction((items: Queued[]) => {
    for (const item of items) {
      try {
        item.outcome = { ok: true, value: item.run() };
      } catch (error) {
        item.outcome = { ok: false, error };
      }
    }
  });
  const commitQueued = () => {
    const items = queued;
    queued = [];
    try {
      commitAllTx.immediate(items);
    } catch (err) {
      for (const item of items) item.reject(err);
      return;
    }
    for (const item of items) {
      const outcome = item.outcome!;
      if (outcome.ok) item.resolve(outcome.value as never);
      else item.reject(outcome.error);
    }
  };
  /** `run` (a transaction function: a savepoint here) in the next shared commit. */
  const together = <T>(run: () => T): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      queued.push({ run, resolve: resolve as (value: never) => void, reject });
      // The writes asked for before this thread turns again share one commit.
      if (queued.length === 1) setImmediate(commitQueued);
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

    beginForwardAttempt(ref, target) {
      return together(() => beginTx(ref, target));
    },

    recordForwardAttempt(ref, attempt, transition, audit, now = Date.now()) {
      return together(() => recordTx(ref, attempt, transition, audit, now));
    },

    async nextDueAt(after) {
      const due = (stmt.nextDue.get(after) as number | null) ?? undefined;
      const probe = control.nextProbeAfter(after);
      return due === undefined || probe === undefined ? (due ?? probe) : Math.min(due, probe);
    },

    async destinationBreakers(endpointIds) {
      return control.breakers(endpointIds);
    },

    async settleDestinations(endpointId, now) {
      settleTx.immediate(endpointId, now);
    },

    async activeBreakers() {
      return control.active();
    },

    async outboxStats() {
      const { pending, oldest } = stmt.stats.get() as { pending: number; oldest: number | null };
      return { pending, oldestDueAt: oldest ?? undefined };
    },

    recordProxyAnswer(ref, responseCode, forwardFailed) {
      return together(() => proxyAnswerTx(ref, responseCode, forwardFailed));
    },
  };
}
