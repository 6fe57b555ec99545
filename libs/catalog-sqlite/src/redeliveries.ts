import type Database from "better-sqlite3";
import {
  OPEN_STATES,
  REDONE_STATES,
  aggregateOf,
  canceledJob,
  claimedJob,
  failedJob,
  isClaimableJob,
  jobLeaseHolds,
  newRedeliveryJob,
  pagedJob,
  redeliveryDestinations,
  redeliveryJobsExceeded,
  redeliveryNotConfigured,
  redeliveryTooLarge,
  redoes,
  releasedJob,
  renewedJob,
  requeuedDelivery,
  settledJob,
  type AuditRecord,
  type CatalogStore,
  type Cursor,
  type EndpointRecord,
  type RedeliveryFilter,
  type RedeliveryJobRecord,
} from "@whc/catalog-core";
import type { DeliveryState } from "@whc/api-model";
import { notFound } from "@whc/errors";
import { DELIVERY_UPSERT_SQL, deliveryRow, deliveryRows, endpointRows, redeliveryJobFromRow, redeliveryJobRows, redeliveryJobToRow, type Row } from "./rows.js";
import { filtersOf } from "./event-search.js";
import type { WriteAudit } from "./audit.js";

export type RedeliveryMethods = Pick<
  CatalogStore,
  | "countRedeliveries"
  | "createRedeliveryJob"
  | "getRedeliveryJob"
  | "listRedeliveryJobs"
  | "cancelRedeliveryJob"
  | "claimRedeliveryJob"
  | "runRedeliveryPage"
  | "releaseRedeliveryJob"
  | "purgeRedeliveryJobs"
>;

const quoted = (words: readonly string[]) => words.map((w) => `'${w}'`).join(", ");
/** The states a job redoes and the open ones, as SQL lists (closed vocabularies, never input). */
const REDONE_SQL = quoted(REDONE_STATES);
const OPEN_SQL = quoted(OPEN_STATES);

/** Which events and deliveries a job takes: its filter and bounds on alias `e`, its destinations on deliveries `rd`. */
interface Selection {
  endpointId: string;
  filter: RedeliveryFilter;
  destinations: readonly string[];
  /** Strictly after this event (the job's cursor). */
  after?: Cursor | undefined;
  /** Up to this event, included (the job's until). */
  until?: Cursor | undefined;
}

function selectionSql(s: Selection): { events: string; deliveries: string; params: unknown[]; deliveryParams: unknown[] } {
  const f = filtersOf(s.filter);
  const bounds = `${s.after ? " AND (e.received_at, e.id) > (?, ?)" : ""}${s.until ? " AND (e.received_at, e.id) <= (?, ?)" : ""}`;
  const params = [s.endpointId, ...(s.after ? [s.after.receivedAt, s.after.id] : []), ...(s.until ? [s.until.receivedAt, s.until.id] : []), ...f.params];
  return {
    events: `e.endpoint_id = ?${bounds}${f.sql}`,
    deliveries: `rd.state IN (${REDONE_SQL}) AND rd.destination_id IN (${s.destinations.map(() => "?").join(", ")})`,
    params,
    deliveryParams: [...s.destinations],
  };
}

/** The SQL a dry run's count and a job's pages share (selectionSql), and a page's requeue of one event. */
function createSelection(db: Database.Database) {
  const stmt = {
    deliveriesOf: db.prepare(`SELECT ${deliveryRows.columns("d")} FROM deliveries d WHERE d.seq = ?`),
    upsert: db.prepare(DELIVERY_UPSERT_SQL),
    // The budget counts from the attempts counted so far: held ones never were (design §18).
    tag: db.prepare("UPDATE deliveries SET bulk_job_id = ?, attempt_base = started - spared WHERE seq = ? AND destination_id = ?"),
    states: db.prepare("SELECT state FROM deliveries WHERE seq = ?").pluck(),
    aggregate: db.prepare("UPDATE events SET forward_state = ? WHERE seq = ?"),
  };
  // Query shapes vary with the filters given; each shape is prepared once.
  const prepared = new Map<string, Database.Statement>();
  const prep = (sql: string): Database.Statement => {
    let statement = prepared.get(sql);
    if (!statement) prepared.set(sql, (statement = db.prepare(sql)));
    return statement;
  };

  return {
    count(s: Selection): number {
      const q = selectionSql(s);
      return prep(`SELECT count(*) FROM events e JOIN deliveries rd ON rd.seq = e.seq WHERE ${q.events} AND ${q.deliveries}`)
        .pluck()
        .get(...q.params, ...q.deliveryParams) as number;
    },

    /** The next `limit` events of the walk with a delivery the job redoes, oldest first. */
    pageEvents(s: Selection, limit: number): { seq: number; received_at: number; id: string }[] {
      const q = selectionSql(s);
      return prep(
        `SELECT e.seq, e.received_at, e.id FROM events e WHERE ${q.events}
          AND EXISTS (SELECT 1 FROM deliveries rd WHERE rd.seq = e.seq AND ${q.deliveries})
          ORDER BY e.received_at, e.id LIMIT ?`,
      ).all(...q.params, ...q.deliveryParams, limit) as { seq: number; received_at: number; id: string }[];
    },

    /** The event's deliveries the job redoes, put back in the outbox and tagged; its aggregate moved. Answers how many. */
    requeueEvent(seq: number, jobId: string, destinations: readonly string[], now: number): number {
      let n = 0;
      for (const row of stmt.deliveriesOf.all(seq) as Row[]) {
        const { destinationId, ...p } = deliveryRows.read(row);
        if (!redoes(destinationId, p.state, destinations)) continue;
        stmt.upsert.run(deliveryRows.values(deliveryRow(seq, destinationId, requeuedDelivery(p, now))));
        stmt.tag.run(jobId, seq, destinationId);
        n += 1;
      }
      stmt.aggregate.run(aggregateOf((stmt.states.all(seq) as DeliveryState[]).map((state) => ({ state }))) ?? null, seq);
      return n;
    },
  };
}

/**
 * Bulk redelivery jobs (design §18; ADR 0089). Every write is an IMMEDIATE transaction: a page
 * requeues its events' deliveries, moves their aggregate states and moves the job's cursor
 * together, so a crash between pages neither skips nor repeats an event. The count of a dry
 * run and the pages of a job select with the same SQL (selectionSql over the list's filters).
 */
export function createRedeliveries(db: Database.Database, writeAudit: WriteAudit): RedeliveryMethods {
  const stmt = {
    endpoint: db.prepare("SELECT * FROM endpoints WHERE id = ? AND account_id = ?"),
    newest: db.prepare("SELECT received_at, id FROM events WHERE endpoint_id = ? ORDER BY received_at DESC, id DESC LIMIT 1"),
    running: db.prepare("SELECT count(*) FROM redelivery_jobs WHERE account_id = ? AND state = 'running'").pluck(),
    insert: db.prepare(redeliveryJobRows.insertSql()),
    job: db.prepare("SELECT * FROM redelivery_jobs WHERE id = ?"),
    jobOf: db.prepare("SELECT * FROM redelivery_jobs WHERE id = ? AND endpoint_id = ? AND account_id = ?"),
    list: db.prepare("SELECT * FROM redelivery_jobs WHERE endpoint_id = ? AND account_id = ? ORDER BY created_at DESC, id DESC LIMIT ?"),
    claimable: db.prepare(
      "SELECT * FROM redelivery_jobs WHERE state = 'running' AND (lease_until IS NULL OR lease_until <= ?) ORDER BY coalesce(lease_until, 0), created_at, id LIMIT 1",
    ),
    open: db.prepare(`SELECT count(*) FROM deliveries WHERE bulk_job_id = ? AND state IN (${OPEN_SQL})`).pluck(),
    purge: db.prepare("DELETE FROM redelivery_jobs WHERE finished_at IS NOT NULL AND finished_at < ?"),
  };
  const { count, pageEvents, requeueEvent } = createSelection(db);
  const update = redeliveryJobRows.update(
    ["state", "total", "queued", "done", "failed", "walked", "cursorAt", "cursorId", "updatedAt", "finishedAt", "leaseOwner", "leaseUntil"],
    "id = ?",
  );
  const updateStmt = db.prepare(update.sql);
  const write = (job: RedeliveryJobRecord) => updateStmt.run(...update.values(redeliveryJobToRow(job)), job.id);

  const endpointOf = (accountId: string, endpointId: string): EndpointRecord | undefined => {
    const row = stmt.endpoint.get(endpointId, accountId) as Row | undefined;
    return row ? endpointRows.read(row) : undefined;
  };

  /** The destinations a job with this filter redoes on the account's endpoint; refused when it is not there or has none. */
  function destinationsFor(accountId: string, endpointId: string, filter: RedeliveryFilter): string[] {
    const endpoint = endpointOf(accountId, endpointId);
    if (!endpoint) throw notFound("endpoint");
    const destinations = redeliveryDestinations(endpoint, filter);
    if (destinations.length === 0) throw redeliveryNotConfigured();
    return destinations;
  }

  const createTx = db.transaction((job: Parameters<CatalogStore["createRedeliveryJob"]>[0], limits: Parameters<CatalogStore["createRedeliveryJob"]>[1], audit: AuditRecord | undefined) => {
    const destinations = destinationsFor(job.accountId, job.endpointId, job.filter);
    if ((stmt.running.get(job.accountId) as number) >= limits.runningPerAccount) throw redeliveryJobsExceeded(limits.runningPerAccount);
    const newest = stmt.newest.get(job.endpointId) as { received_at: number; id: string } | undefined;
    const until = newest && { receivedAt: newest.received_at, id: newest.id };
    const total = until ? count({ endpointId: job.endpointId, filter: job.filter, destinations, until }) : 0;
    if (total > limits.deliveriesPerJob) throw redeliveryTooLarge(limits.deliveriesPerJob);
    const created = newRedeliveryJob(job, total, until);
    stmt.insert.run(redeliveryJobRows.values(redeliveryJobToRow(created)));
    writeAudit(audit && { ...audit, details: { ...audit.details, total } });
    return created;
  });

  /** One page of the walk (the port's runRedeliveryPage). */
  function walk(job: RedeliveryJobRecord, now: number, limit: number): RedeliveryJobRecord {
    const endpoint = endpointOf(job.accountId, job.endpointId);
    const destinations = endpoint ? redeliveryDestinations(endpoint, job.filter) : [];
    if (destinations.length === 0) return failedJob(job, now);
    const events = pageEvents({ endpointId: job.endpointId, filter: job.filter, destinations, after: job.cursor, until: job.until }, limit);
    let queued = 0;
    for (const e of events) queued += requeueEvent(e.seq, job.id, destinations, now);
    const last = events.at(-1);
    return pagedJob(job, { last: last && { receivedAt: last.received_at, id: last.id }, queued, full: events.length === limit }, now);
  }

  const pageTx = db.transaction((jobId: string, owner: string, now: number, limit: number, leaseMs: number): RedeliveryJobRecord | undefined => {
    const row = stmt.job.get(jobId) as Row | undefined;
    if (!row) return undefined;
    let job = redeliveryJobFromRow(row);
    if (!jobLeaseHolds(job, owner)) return undefined;
    if (job.state === "running" && !job.walked && limit > 0) job = walk(job, now, limit);
    if (job.state === "running" && job.walked) job = settledJob(job, stmt.open.get(job.id) as number, now);
    job = renewedJob(job, now, leaseMs);
    write(job);
    return job;
  });

  const cancelTx = db.transaction((accountId: string, endpointId: string, jobId: string, now: number, audit: AuditRecord | undefined) => {
    const row = stmt.jobOf.get(jobId, endpointId, accountId) as Row | undefined;
    if (!row) return undefined;
    const job = redeliveryJobFromRow(row);
    if (job.state !== "running") return job;
    const canceled = canceledJob(job, now);
    write(canceled);
    writeAudit(audit && { ...audit, details: { ...audit.details, queued: canceled.queued } });
    return canceled;
  });

  const claimTx = db.transaction((owner: string, now: number, leaseMs: number) => {
    const row = stmt.claimable.get(now) as Row | undefined;
    if (!row) return undefined;
    const job = redeliveryJobFromRow(row);
    if (!isClaimableJob(job, now)) return undefined;
    const claimed = claimedJob(job, owner, now, leaseMs);
    write(claimed);
    return claimed;
  });

  const releaseTx = db.transaction((jobId: string, owner: string, at: number) => {
    const row = stmt.job.get(jobId) as Row | undefined;
    if (!row) return false;
    const job = redeliveryJobFromRow(row);
    if (!jobLeaseHolds(job, owner)) return false;
    write(releasedJob(job, at));
    return true;
  });

  return {
    async countRedeliveries(accountId, endpointId, filter) {
      return db
        .transaction(() => {
          const destinations = destinationsFor(accountId, endpointId, filter);
          return count({ endpointId, filter, destinations });
        })
        .deferred();
    },

    async createRedeliveryJob(job, limits, audit) {
      return createTx.immediate(job, limits, audit);
    },

    async getRedeliveryJob(accountId, endpointId, jobId) {
      const row = stmt.jobOf.get(jobId, endpointId, accountId) as Row | undefined;
      return row ? redeliveryJobFromRow(row) : undefined;
    },

    async listRedeliveryJobs(accountId, endpointId, limit) {
      return (stmt.list.all(endpointId, accountId, limit) as Row[]).map(redeliveryJobFromRow);
    },

    async cancelRedeliveryJob(accountId, endpointId, jobId, now, audit) {
      return cancelTx.immediate(accountId, endpointId, jobId, now, audit);
    },

    async claimRedeliveryJob(owner, now, leaseMs) {
      return claimTx.immediate(owner, now, leaseMs);
    },

    async runRedeliveryPage(jobId, owner, now, limit, leaseMs) {
      return pageTx.immediate(jobId, owner, now, limit, leaseMs);
    },

    async releaseRedeliveryJob(jobId, owner, at) {
      return releaseTx.immediate(jobId, owner, at);
    },

    async purgeRedeliveryJobs(before) {
      return stmt.purge.run(before).changes;
    },
  };
}
