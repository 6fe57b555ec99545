import type { ClientSession } from "mongodb";
import {
  canceledJob,
  claimedJob,
  failedJob,
  isClaimableJob,
  jobAfterEnded,
  jobLeaseHolds,
  newRedeliveryJob,
  pagedJob,
  redeliveryDestinations,
  redeliveryJobsExceeded,
  redeliveryNotConfigured,
  redeliveryTooLarge,
  releasedJob,
  renewedJob,
  settledJob,
  type AuditRecord,
  type CatalogStore,
  type Cursor,
  type RedeliveryFilter,
  type RedeliveryJobRecord,
} from "@whc/catalog-core";
import { notFound } from "@whc/errors";
import type { CatalogCollections, InTransaction } from "./connection.js";
import { NEWEST_FIRST, OLDEST_FIRST, type Doc } from "./documents.js";
import {
  CLAIM_JOB_ORDER,
  JOBS_NEWEST_FIRST,
  claimableJobFilter,
  jobDoc,
  jobWriteFilter,
  openCountPipeline,
  redeliveryCountPipeline,
  redeliveryFilter,
  requeueUpdate,
  revOf,
  taggedCountPipeline,
  type RedeliverySelection,
} from "./redelivery-documents.js";
import { auditLogDocs, endpointDocs, redeliveryJobDocs, type AnyDoc } from "./records.js";

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
> & {
  /** The record path's count of a job's delivery that ended (forwarding.ts). */
  countJobEnded(jobId: string, outcome: "done" | "failed", at: number): Promise<void>;
};

type Collections = Pick<CatalogCollections, "accounts" | "endpoints" | "events" | "redeliveryJobs" | "auditLog">;

/** A write refused because the job changed since it was read: made again from the job as it now is. */
const RACED = Symbol("raced");
const MAX_TRIES = 8;

/** The guard a start makes first, in its transaction: two starts of one account conflict (ADR 0036's way). */
function startGuard(accountId: string): { filter: Doc; update: Doc } {
  return { filter: { _id: accountId }, update: { $inc: { redeliveryStarts: 1 } } };
}

/**
 * Bulk redelivery jobs (design §18; ADR 0089) in `redelivery_jobs`, and their deliveries tagged
 * in the events' `deliveries`. Every change of a job replaces the document read, while its `rev`
 * is unchanged (jobDoc, jobWriteFilter), and is made again when another write came between. A
 * page runs in one transaction where the server has them; on a standalone server its steps are
 * such that a page interrupted after requeueing and before moving the cursor, run again, puts
 * back nothing twice (the job's own deliveries are not taken again) and counts what the
 * interrupted run tagged (taggedCountPipeline over the page's events).
 */
export function createRedeliveries(c: Collections, inTransaction: InTransaction): RedeliveryMethods {
  let startChain: Promise<unknown> = Promise.resolve();

  async function destinationsFor(accountId: string, endpointId: string, filter: RedeliveryFilter, session?: ClientSession): Promise<string[]> {
    const doc = await c.endpoints.findOne({ _id: endpointId, accountId }, { session });
    if (!doc) throw notFound("endpoint");
    const destinations = redeliveryDestinations(endpointDocs.read(doc), filter);
    if (destinations.length === 0) throw redeliveryNotConfigured();
    return destinations;
  }

  async function sum(pipeline: Doc[], session?: ClientSession): Promise<number> {
    const [row] = await c.events.aggregate<{ n: number }>(pipeline, { session }).toArray();
    return row?.n ?? 0;
  }

  async function readJob(filter: Doc, session?: ClientSession): Promise<{ job: RedeliveryJobRecord; rev: number } | undefined> {
    const doc = await c.redeliveryJobs.findOne(filter, { session });
    return doc ? { job: redeliveryJobDocs.read(doc), rev: revOf(doc) } : undefined;
  }

  async function writeJob(job: RedeliveryJobRecord, rev: number, session?: ClientSession): Promise<boolean> {
    const { matchedCount } = await c.redeliveryJobs.replaceOne(jobWriteFilter(job.id, rev), jobDoc(job, rev + 1), { session });
    return matchedCount > 0;
  }

  /** Runs `attempt` (in a transaction where the server has them) until its write was not raced. */
  async function untilWritten<T>(attempt: (session?: ClientSession) => Promise<T | typeof RACED>): Promise<T> {
    for (let tries = 1; ; tries += 1) {
      const result = await inTransaction(attempt);
      if (result !== RACED) return result;
      if (tries >= MAX_TRIES) throw new Error("redelivery job kept changing while it was written");
    }
  }

  async function start(job: Parameters<CatalogStore["createRedeliveryJob"]>[0], limits: Parameters<CatalogStore["createRedeliveryJob"]>[1], audit: AuditRecord | undefined) {
    return inTransaction(async (session) => {
      const guard = startGuard(job.accountId);
      await c.accounts.updateOne(guard.filter, guard.update, { session });
      const destinations = await destinationsFor(job.accountId, job.endpointId, job.filter, session);
      const running = await c.redeliveryJobs.countDocuments({ accountId: job.accountId, state: "running" }, { session, limit: limits.runningPerAccount });
      if (running >= limits.runningPerAccount) throw redeliveryJobsExceeded(limits.runningPerAccount);
      const newest = await c.events.find({ endpointId: job.endpointId }, { session, projection: { receivedAt: 1 } }).sort(NEWEST_FIRST).limit(1).next();
      const until: Cursor | undefined = newest ? { receivedAt: newest.receivedAt as number, id: newest._id } : undefined;
      const selection: RedeliverySelection = { accountId: job.accountId, endpointId: job.endpointId, filter: job.filter, destinations, until };
      const total = until ? await sum(redeliveryCountPipeline(selection), session) : 0;
      if (total > limits.deliveriesPerJob) throw redeliveryTooLarge(limits.deliveriesPerJob);
      const created = newRedeliveryJob(job, total, until);
      await c.redeliveryJobs.insertOne(jobDoc(created, 0), { session });
      if (audit) await c.auditLog.insertOne(auditLogDocs.write({ ...audit, details: { ...audit.details, total } }), { session });
      return created;
    });
  }

  /** One page of the walk (the port's runRedeliveryPage): the deliveries requeued, then the job moved past them. */
  async function walk(job: RedeliveryJobRecord, now: number, limit: number, session?: ClientSession): Promise<RedeliveryJobRecord> {
    const endpoint = await c.endpoints.findOne({ _id: job.endpointId, accountId: job.accountId }, { session });
    const destinations = endpoint ? redeliveryDestinations(endpointDocs.read(endpoint), job.filter) : [];
    if (destinations.length === 0) return failedJob(job, now);
    const selection: RedeliverySelection = { ...job, destinations, after: job.cursor, until: job.until, jobId: job.id };
    const events = await c.events.find(redeliveryFilter(selection), { session, projection: { receivedAt: 1 } }).sort(OLDEST_FIRST).limit(limit).toArray();
    const lastDoc = events.at(-1);
    const last: Cursor | undefined = lastDoc && { receivedAt: lastDoc.receivedAt as number, id: lastDoc._id };
    let queued = 0;
    if (last) {
      await c.events.updateMany({ _id: { $in: events.map((e) => e._id) }, endpointId: job.endpointId }, requeueUpdate({ destinations, jobId: job.id }, now), { session });
      queued = await sum(taggedCountPipeline(job.endpointId, job.id, { after: job.cursor, upTo: last }), session);
    }
    return pagedJob(job, { last, queued, full: events.length === limit }, now);
  }

  async function page(jobId: string, owner: string, now: number, limit: number, leaseMs: number) {
    return untilWritten<RedeliveryJobRecord | undefined>(async (session) => {
      const read = await readJob({ _id: jobId }, session);
      if (!read || !jobLeaseHolds(read.job, owner)) return undefined;
      let job = read.job;
      if (job.state === "running" && !job.walked && limit > 0) job = await walk(job, now, limit, session);
      if (job.state === "running" && job.walked) job = settledJob(job, await sum(openCountPipeline(job.endpointId, job.id), session), now);
      job = renewedJob(job, now, leaseMs);
      return (await writeJob(job, read.rev, session)) ? job : RACED;
    });
  }

  return {
    async countRedeliveries(accountId, endpointId, filter) {
      const destinations = await destinationsFor(accountId, endpointId, filter);
      return sum(redeliveryCountPipeline({ accountId, endpointId, filter, destinations }));
    },

    async createRedeliveryJob(job, limits, audit) {
      // Starts in this process take turns too: what keeps the limit on a standalone server (no transactions: one catalog process).
      const run = startChain.then(() => start(job, limits, audit));
      startChain = run.catch(() => undefined);
      return run;
    },

    async getRedeliveryJob(accountId, endpointId, jobId) {
      return (await readJob({ _id: jobId, endpointId, accountId }))?.job;
    },

    async listRedeliveryJobs(accountId, endpointId, limit) {
      const docs = await c.redeliveryJobs.find({ endpointId, accountId }).sort(JOBS_NEWEST_FIRST).limit(limit).toArray();
      return docs.map((d: AnyDoc) => redeliveryJobDocs.read(d));
    },

    async cancelRedeliveryJob(accountId, endpointId, jobId, now, audit) {
      return untilWritten<RedeliveryJobRecord | undefined>(async (session) => {
        const read = await readJob({ _id: jobId, endpointId, accountId }, session);
        if (!read || read.job.state !== "running") return read?.job;
        const canceled = canceledJob(read.job, now);
        if (!(await writeJob(canceled, read.rev, session))) return RACED;
        if (audit) await c.auditLog.insertOne(auditLogDocs.write({ ...audit, details: { ...audit.details, queued: canceled.queued } }), { session });
        return canceled;
      });
    },

    async claimRedeliveryJob(owner, now, leaseMs) {
      for (let tries = 0; tries < MAX_TRIES; tries += 1) {
        const doc = await c.redeliveryJobs.find(claimableJobFilter(now)).sort(CLAIM_JOB_ORDER).limit(1).next();
        if (!doc) return undefined;
        const job = redeliveryJobDocs.read(doc);
        if (!isClaimableJob(job, now)) return undefined;
        const claimed = claimedJob(job, owner, now, leaseMs);
        // Another runner took it between the read and the write: look for the next one.
        if (await writeJob(claimed, revOf(doc))) return claimed;
      }
      return undefined;
    },

    runRedeliveryPage: page,

    async releaseRedeliveryJob(jobId, owner, at) {
      return untilWritten<boolean>(async (session) => {
        const read = await readJob({ _id: jobId }, session);
        if (!read || !jobLeaseHolds(read.job, owner)) return false;
        return (await writeJob(releasedJob(read.job, at), read.rev, session)) ? true : RACED;
      });
    },

    async purgeRedeliveryJobs(before) {
      return (await c.redeliveryJobs.deleteMany({ finishedAt: { $lt: before } })).deletedCount;
    },

    async countJobEnded(jobId, outcome, at) {
      await untilWritten<void>(async (session) => {
        const read = await readJob({ _id: jobId }, session);
        if (!read) return;
        return (await writeJob(jobAfterEnded(read.job, outcome, at), read.rev, session)) ? undefined : RACED;
      });
    },
  };
}
