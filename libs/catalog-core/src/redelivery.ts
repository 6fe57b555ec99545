import { AppError } from "@whc/errors";
import { REDELIVERED_STATES, type DeliveryState } from "@whc/api-model";
import { destinationsOf } from "@whc/api-model/present";
import type { DeliveryProgress } from "./delivery.js";
import type { Cursor, EndpointRecord, NewRedeliveryJob, RedeliveryFilter, RedeliveryJobRecord } from "./types.js";

/**
 * Bulk redelivery (design §18; ADR 0089): the reference every store applies, as delivery.ts is
 * for the outbox. A job walks its endpoint's events oldest first; for each event the filter
 * takes, the deliveries it redoes (redoes) go back in the outbox (requeued), tagged with the
 * job, and the job's cursor moves past the page in the same transaction (pagedJob). A tagged
 * delivery that ends (endedOutcome) counts into its job (jobAfterEnded).
 */

/** The delivery states a job redoes: every ended one but duplicate (never sent, by design). */
export const REDONE_STATES: readonly DeliveryState[] = REDELIVERED_STATES;

/** Waiting to be sent (in the outbox, or held by a breaker): a job leaves these alone. */
export const OPEN_STATES: readonly DeliveryState[] = ["pending", "held"];

/** Which destinations' deliveries a job with this filter redoes: the endpoint's own, or the filter's one among them. */
export function redeliveryDestinations(endpoint: Pick<EndpointRecord, "id" | "forwardJson">, filter: RedeliveryFilter): string[] {
  const ids = destinationsOf({ id: endpoint.id, forwardJson: endpoint.forwardJson, targetSecretSet: false }).map((d) => d.id);
  return filter.destinationId === undefined ? ids : ids.filter((id) => id === filter.destinationId);
}

/** The refusal of a job (or a count) on an endpoint without the destinations it would redo. */
export function redeliveryNotConfigured(): AppError {
  return new AppError("forward_not_configured", "the endpoint has no destination to redeliver to");
}

/** Whether a job redoes this delivery: to one of its destinations, ended but not a duplicate. */
export function redoes(destinationId: string, state: DeliveryState | undefined, destinations: readonly string[]): boolean {
  return state !== undefined && REDONE_STATES.includes(state) && destinations.includes(destinationId);
}

/** A delivery put back in the outbox: pending, due at once, claimed by nobody (the job's tag and attempt base are kept beside it). */
export function requeuedDelivery(p: DeliveryProgress, now: number): DeliveryProgress {
  return { ...p, state: "pending", nextAttemptAt: now, claimOwner: undefined, claimUntil: undefined };
}

/** How a tagged delivery's change counts for its job: it ended (left pending or held for good) delivered/skipped or failed/exhausted. */
export function endedOutcome(before: DeliveryState | undefined, after: DeliveryState | undefined): "done" | "failed" | undefined {
  if (before === undefined || after === undefined || !OPEN_STATES.includes(before) || OPEN_STATES.includes(after)) return undefined;
  return after === "delivered" || after === "skipped" ? "done" : "failed";
}

export function newRedeliveryJob(job: NewRedeliveryJob, total: number, until: Cursor | undefined): RedeliveryJobRecord {
  const empty = until === undefined || total === 0;
  return {
    ...job,
    state: empty ? "done" : "running",
    total,
    queued: 0,
    done: 0,
    failed: 0,
    walked: empty,
    cursor: undefined,
    until,
    updatedAt: job.createdAt,
    finishedAt: empty ? job.createdAt : undefined,
    leaseOwner: undefined,
    leaseUntil: undefined,
  };
}

/** Running and nobody's lease holds at `now` (or it was released for later, and later came). */
export function isClaimableJob(job: Pick<RedeliveryJobRecord, "state" | "leaseUntil">, now: number): boolean {
  return job.state === "running" && (job.leaseUntil === undefined || job.leaseUntil <= now);
}

export function claimedJob(job: RedeliveryJobRecord, owner: string, now: number, leaseMs: number): RedeliveryJobRecord {
  return { ...job, leaseOwner: owner, leaseUntil: now + leaseMs };
}

/** The owner's lease: nobody claimed the job since (a lease that ran out still holds until someone does). */
export function jobLeaseHolds(job: Pick<RedeliveryJobRecord, "leaseOwner">, owner: string): boolean {
  return job.leaseOwner === owner;
}

/** The job finished as `state`: its total is what it put back, and its lease is given up. */
function finished(job: RedeliveryJobRecord, state: "done" | "failed" | "canceled", now: number): RedeliveryJobRecord {
  return { ...job, state, total: job.queued, finishedAt: now, updatedAt: now, leaseOwner: undefined, leaseUntil: undefined };
}

/**
 * After one page of the walk: `queued` more deliveries put back, the cursor at the page's last
 * event (unchanged when it had none); a page shorter than asked ends the walk, and the total
 * becomes exact. Then settled as settledJob says.
 */
export function pagedJob(job: RedeliveryJobRecord, page: { last: Cursor | undefined; queued: number; full: boolean }, now: number): RedeliveryJobRecord {
  const moved: RedeliveryJobRecord = { ...job, cursor: page.last ?? job.cursor, queued: job.queued + page.queued, updatedAt: now };
  return page.full ? moved : { ...moved, walked: true, total: moved.queued };
}

/** A walked job whose deliveries all ended is done; `open` is how many it put back are still pending or held. */
export function settledJob(job: RedeliveryJobRecord, open: number, now: number): RedeliveryJobRecord {
  if (job.state !== "running" || !job.walked) return job;
  if (open === 0 || job.done + job.failed >= job.queued) return finished(job, "done", now);
  return job;
}

/** A running job whose endpoint lost the destinations it redoes: its walk stops (what it put back still goes). */
export function failedJob(job: RedeliveryJobRecord, now: number): RedeliveryJobRecord {
  return job.state === "running" ? finished(job, "failed", now) : job;
}

/** A cancel: a running job's walk stops where it is; any other stays as it is. */
export function canceledJob(job: RedeliveryJobRecord, now: number): RedeliveryJobRecord {
  return job.state === "running" ? finished(job, "canceled", now) : job;
}

/** One of the job's deliveries ended: counted, and a walked running job whose count is complete is done. */
export function jobAfterEnded(job: RedeliveryJobRecord, outcome: "done" | "failed", now: number): RedeliveryJobRecord {
  const counted: RedeliveryJobRecord = {
    ...job,
    done: job.done + (outcome === "done" ? 1 : 0),
    failed: job.failed + (outcome === "failed" ? 1 : 0),
    updatedAt: Math.max(job.updatedAt, now),
  };
  if (counted.state === "running" && counted.walked && counted.done + counted.failed >= counted.queued) return finished(counted, "done", counted.updatedAt);
  return counted;
}

/** The lease renewed by the owner working the job. */
export function renewedJob(job: RedeliveryJobRecord, now: number, leaseMs: number): RedeliveryJobRecord {
  return job.state === "running" ? { ...job, leaseUntil: now + leaseMs } : job;
}

/** Given back: claimable again from `at` (by anyone). */
export function releasedJob(job: RedeliveryJobRecord, at: number): RedeliveryJobRecord {
  return job.state === "running" ? { ...job, leaseOwner: undefined, leaseUntil: at } : job;
}

/** Strictly after `a` in (receivedAt, id) order. */
export function cursorAfter(c: Cursor, a: Cursor | undefined): boolean {
  return a === undefined || c.receivedAt > a.receivedAt || (c.receivedAt === a.receivedAt && c.id > a.id);
}
