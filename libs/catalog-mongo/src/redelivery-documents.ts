import { OPEN_STATES, REDONE_STATES, type Cursor, type RedeliveryFilter, type RedeliveryJobRecord } from "@whc/catalog-core";
import { SUMMARIZE } from "./delivery-documents.js";
import { baseFilter, newerThan, type Doc } from "./documents.js";
import { redeliveryJobDocs, type AnyDoc } from "./records.js";

/**
 * Bulk redelivery's filter, pipeline and update documents (design §18; ADR 0089), checked with
 * mingo against catalog-core's reference functions (redoes, requeuedDelivery, isClaimableJob)
 * in redelivery-documents.test.ts. The events a job takes are the event list's filter
 * (baseFilter) plus a delivery it redoes; the dry run's count and a job's pages use the same.
 */

const DELIVERIES = { $ifNull: ["$deliveries", []] };

/** Which events and deliveries: the job's filter and destinations, after its cursor and up to its end. */
export interface RedeliverySelection {
  accountId: string;
  endpointId: string;
  filter: RedeliveryFilter;
  destinations: readonly string[];
  after?: Cursor | undefined;
  until?: Cursor | undefined;
  /** A job's page: deliveries this job already put back are not taken again (a page run again after a crash). */
  jobId?: string | undefined;
}

/** Up to the (receivedAt, id) pair, included. */
export function notNewerThan(c: Cursor): Doc {
  return { $or: [{ receivedAt: { $lt: c.receivedAt } }, { receivedAt: c.receivedAt, _id: { $lte: c.id } }] };
}

/** Whether the delivery `d` (an expression naming it, "$$d") is one the job redoes (catalog-core's redoes). */
export function redoneExpr(d: string, s: Pick<RedeliverySelection, "destinations" | "jobId">): Doc {
  return {
    $and: [
      { $in: [`${d}.state`, { $literal: REDONE_STATES }] },
      { $in: [`${d}.destinationId`, { $literal: s.destinations }] },
      ...(s.jobId === undefined ? [] : [{ $ne: [{ $ifNull: [`${d}.bulkJobId`, null] }, { $literal: s.jobId }] }]),
    ],
  };
}

/** The events with at least one delivery the job redoes (the page's and the count's $match). */
export function redeliveryFilter(s: RedeliverySelection): Doc {
  const elem: Doc = { state: { $in: [...REDONE_STATES] }, destinationId: { $in: [...s.destinations] } };
  if (s.jobId !== undefined) elem.bulkJobId = { $ne: s.jobId };
  const and = [s.after && newerThan(s.after), s.until && notNewerThan(s.until)].filter((x): x is Doc => x !== undefined);
  return {
    ...baseFilter({ accountId: s.accountId, endpointId: s.endpointId, limit: 0, ...s.filter }),
    deliveries: { $elemMatch: elem },
    ...(and.length > 0 ? { $and: and } : {}),
  };
}

/** How many deliveries the selection redoes: one figure `n` (no document when there is none). */
export function redeliveryCountPipeline(s: RedeliverySelection): Doc[] {
  return [
    { $match: redeliveryFilter(s) },
    { $project: { n: { $size: { $filter: { input: DELIVERIES, as: "d", cond: redoneExpr("$$d", s) } } } } },
    { $group: { _id: null, n: { $sum: "$n" } } },
  ];
}

/**
 * A page's events (updateMany over their ids): each delivery the job redoes put back in the
 * outbox (requeuedDelivery: pending, due `now`, claimed by nobody), tagged with the job and with
 * the attempts it had (its fresh budget's base); the event's aggregate and outbox time moved.
 */
export function requeueUpdate(s: Pick<RedeliverySelection, "destinations"> & { jobId: string }, now: number): Doc[] {
  const requeued = { state: "pending", nextAttemptAt: now, claimOwner: null, claimUntil: null, bulkJobId: { $literal: s.jobId }, attemptBase: { $subtract: ["$$d.started", { $ifNull: ["$$d.spared", 0] }] } };
  return [
    { $set: { deliveries: { $map: { input: DELIVERIES, as: "d", in: { $cond: [redoneExpr("$$d", s), { $mergeObjects: ["$$d", requeued] }, "$$d"] } } } } },
    SUMMARIZE,
  ];
}

/**
 * How many of the endpoint's deliveries carry the job (in `states`, when given), over the events
 * after `after` and up to `upTo`: a page's count (it counts what an interrupted run of the same
 * page already tagged), and a walked job's open deliveries.
 */
export function taggedCountPipeline(endpointId: string, jobId: string, o: { after?: Cursor | undefined; upTo?: Cursor | undefined; states?: readonly string[] } = {}): Doc[] {
  const elem: Doc = { bulkJobId: jobId, ...(o.states ? { state: { $in: [...o.states] } } : {}) };
  const and = [o.after && newerThan(o.after), o.upTo && notNewerThan(o.upTo)].filter((x): x is Doc => x !== undefined);
  const cond = { $and: [{ $eq: [{ $ifNull: ["$$d.bulkJobId", null] }, { $literal: jobId }] }, ...(o.states ? [{ $in: ["$$d.state", { $literal: o.states }] }] : [])] };
  return [
    { $match: { endpointId, deliveries: { $elemMatch: elem }, ...(and.length > 0 ? { $and: and } : {}) } },
    { $project: { n: { $size: { $filter: { input: DELIVERIES, as: "d", cond } } } } },
    { $group: { _id: null, n: { $sum: "$n" } } },
  ];
}

/** A walked job's deliveries still waiting (pending or held). */
export function openCountPipeline(endpointId: string, jobId: string): Doc[] {
  return taggedCountPipeline(endpointId, jobId, { states: OPEN_STATES });
}

/** Running jobs nobody's lease holds at `now` (isClaimableJob); CLAIM_JOB_ORDER picks the one whose lease ended first, never-leased first. */
export function claimableJobFilter(now: number): Doc {
  return { state: "running", $or: [{ leaseUntil: null }, { leaseUntil: { $lte: now } }] };
}
export const CLAIM_JOB_ORDER = { leaseUntil: 1, createdAt: 1, _id: 1 } as const;

/** An endpoint's jobs, newest first. */
export const JOBS_NEWEST_FIRST = { createdAt: -1, _id: -1 } as const;

/**
 * A job's document at version `rev`. Every write of a job replaces the document it read, only
 * while its `rev` is still the one read (jobWriteFilter): a page, a count, a claim or a cancel
 * that raced another write of the job is refused and made again from the job as it now is.
 */
export function jobDoc(job: RedeliveryJobRecord, rev: number): AnyDoc {
  return { ...redeliveryJobDocs.write(job), rev };
}

export function jobWriteFilter(jobId: string, rev: number): Doc {
  return { _id: jobId, rev };
}

/** The version of a job's document (jobs are written with one from the start). */
export function revOf(doc: AnyDoc): number {
  return typeof doc.rev === "number" ? doc.rev : 0;
}
