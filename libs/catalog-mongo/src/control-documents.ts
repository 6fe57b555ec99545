import type { BreakerRecord } from "@whc/catalog-core";
import type { BreakerState } from "@whc/api-model";
import type { Doc } from "./documents.js";
import { DELIVERIES, SUMMARIZE, claimableExpr } from "./delivery-documents.js";

/**
 * Delivery control's documents (design §18; ADRs 0087, 0088). A destination's breaker is a
 * document of `destination_breakers`, changed only by compare-and-set on its version `v`, so
 * catalog processes never both take one rate limit turn, one concurrency slot or one probe.
 * Each change to one delivery is a pipeline update of its event's document that applies only
 * while the delivery is as the decision saw it (its condition, repeated in the filter so the
 * update answers whether it applied); every one is checked with mingo against catalog-core's
 * reference functions (control-documents.test.ts).
 */

/** A claim of a concurrency-limited destination in flight: until its record, or until `until`. */
export interface InFlightToken {
  eventId: string;
  until: number;
}

/** The breaker document: the record, its claims in flight, and its version. */
export interface BreakerDoc {
  _id: string;
  endpointId: string;
  accountId: string;
  state: BreakerState;
  since: number | null;
  consecutiveFailures: number;
  probeDelayMs: number;
  nextProbeAt: number | null;
  probeEventId: string | null;
  holding: boolean;
  slotAt: number;
  queuedUntil: number;
  drainedAt: number;
  inFlight: InFlightToken[];
  v: number;
}

export function breakerFromDoc(d: BreakerDoc): BreakerRecord {
  return {
    destinationId: d._id,
    endpointId: d.endpointId,
    accountId: d.accountId,
    state: d.state,
    since: d.since ?? undefined,
    consecutiveFailures: d.consecutiveFailures,
    probeDelayMs: d.probeDelayMs,
    nextProbeAt: d.nextProbeAt ?? undefined,
    probeEventId: d.probeEventId ?? undefined,
    holding: d.holding,
    slotAt: d.slotAt,
    queuedUntil: d.queuedUntil ?? 0,
    drainedAt: d.drainedAt ?? 0,
  };
}

export function breakerToDoc(b: BreakerRecord, inFlight: InFlightToken[], v: number): BreakerDoc {
  return {
    _id: b.destinationId,
    endpointId: b.endpointId,
    accountId: b.accountId,
    state: b.state,
    since: b.since ?? null,
    consecutiveFailures: b.consecutiveFailures,
    probeDelayMs: b.probeDelayMs,
    nextProbeAt: b.nextProbeAt ?? null,
    probeEventId: b.probeEventId ?? null,
    holding: b.holding,
    slotAt: b.slotAt,
    queuedUntil: b.queuedUntil,
    drainedAt: b.drainedAt,
    inFlight,
    v,
  };
}

/** The claims in flight at `now` (a lapsed one no longer counts). */
export function liveTokens(tokens: readonly InFlightToken[], now: number): InFlightToken[] {
  return tokens.filter((t) => t.until > now);
}

/** The breakers a claim releases (closed, holding), probes (open or half-open, due), and the metrics show. */
export const RELEASABLE_FILTER = { holding: true, state: "closed" } as const;
export function probesDueFilter(now: number): Doc {
  return { state: { $ne: "closed" }, nextProbeAt: { $lte: now } };
}
export const ACTIVE_FILTER: Doc = { $or: [{ holding: true }, { state: { $ne: "closed" } }] };
export function nextProbeFilter(after: number): Doc {
  return { state: { $ne: "closed" }, nextProbeAt: { $gt: after } };
}

/** Events with a held delivery to the destination (the partial index held_deliveries), oldest first by _id (UUIDv7). */
export function heldFilter(destinationId: string): Doc {
  return { "deliveries.destinationId": destinationId, "deliveries.state": "held", deliveries: { $elemMatch: { destinationId, state: "held" } } };
}
export const HELD_ORDER = { _id: 1 } as const;
/** The events' index for held deliveries: partial, only events with one. */
export const HELD_INDEX = {
  key: { "deliveries.destinationId": 1, _id: 1 },
  name: "held_deliveries",
  partialFilterExpression: { "deliveries.state": "held" },
} as const;

/** A claim's candidates: events with a delivery claimable at `now` to a destination not left out (busy ones). */
export function candidatesFilter(now: number, busy: readonly string[]): Doc {
  return {
    outboxAt: { $lte: now },
    deliveries: {
      $elemMatch: {
        state: "pending",
        nextAttemptAt: { $lte: now },
        $or: [{ claimUntil: null }, { claimUntil: { $lte: now } }],
        ...(busy.length > 0 ? { destinationId: { $nin: [...busy] } } : {}),
      },
    },
  };
}

/** The delivery of `eventId` to `destinationId`, claimable at `now`, with its counter at `started`: as the claim saw it. */
export function claimableOneFilter(eventId: string, destinationId: string, now: number, started: number): Doc {
  return {
    _id: eventId,
    deliveries: {
      $elemMatch: { destinationId, state: "pending", started, nextAttemptAt: { $lte: now }, $or: [{ claimUntil: null }, { claimUntil: { $lte: now } }] },
    },
  };
}

export function heldOneFilter(eventId: string, destinationId: string): Doc {
  return { _id: eventId, deliveries: { $elemMatch: { destinationId, state: "held" } } };
}

/** Events with a delivery to the destination waiting in the outbox and not in flight at `now` (the outbox's partial index). */
export function waitingFilter(destinationId: string, now: number): Doc {
  return {
    outboxAt: { $type: "number" },
    deliveries: { $elemMatch: { destinationId, state: "pending", nextAttemptAt: { $ne: null }, $or: [{ claimUntil: null }, { claimUntil: { $lte: now } }] } },
  };
}

const isTo = (destinationId: string) => ({ $eq: ["$$d.destinationId", { $literal: destinationId }] });
const claimableAtExpr = (now: number) => ({ $and: [{ $ne: [claimableExpr("$$d"), null] }, { $lte: [claimableExpr("$$d"), now] }] });
const heldExpr = { $eq: ["$$d.state", "held"] };
const waitingExpr = (now: number) => ({
  $and: [{ $eq: ["$$d.state", "pending"] }, { $ne: [{ $ifNull: ["$$d.nextAttemptAt", null] }, null] }, { $lte: [{ $ifNull: ["$$d.claimUntil", 0] }, now] }],
});

/** The event's deliveries to `destinationId` meeting `cond` merged with `change` (which may read `$$d`), then its summary. */
function changeDeliveries(destinationId: string, cond: unknown, change: Doc): Doc[] {
  return [
    { $set: { deliveries: { $map: { input: DELIVERIES, as: "d", in: { $cond: [{ $and: [isTo(destinationId), cond] }, { $mergeObjects: ["$$d", change] }, "$$d"] } } } } },
    SUMMARIZE,
  ];
}

/**
 * claimedDelivery: the next attempt number, hidden until now + claimMs; `letThrough`: the
 * delivery its destination lets through while holding, claimed as letThroughClaim (a lapsed
 * claim left on it is spared).
 */
export function claimOneUpdate(destinationId: string, owner: string, now: number, claimMs: number, started: number, letThrough = false): Doc[] {
  return changeDeliveries(destinationId, { $and: [claimableAtExpr(now), { $eq: ["$$d.started", started] }] }, {
    started: { $add: ["$$d.started", 1] },
    ...(letThrough ? { spared: { $add: [{ $ifNull: ["$$d.spared", 0] }, { $cond: [{ $eq: [{ $ifNull: ["$$d.claimOwner", null] }, null] }, 0, 1] }] } } : {}),
    claimOwner: { $literal: owner },
    claimUntil: now + claimMs,
  });
}

/** heldDelivery, of one delivery claimable at `now`. */
export function holdOneUpdate(destinationId: string, now: number, started: number): Doc[] {
  return changeDeliveries(destinationId, { $and: [claimableAtExpr(now), { $eq: ["$$d.started", started] }] }, HELD);
}

const HELD = { state: "held", nextAttemptAt: null, claimOwner: null, claimUntil: null };

/** heldDelivery, of every waiting delivery to the destination (updateMany with waitingFilter). */
export function holdWaitingUpdate(destinationId: string, now: number): Doc[] {
  return changeDeliveries(destinationId, waitingExpr(now), HELD);
}

/** A delivery waiting for its rate limit's turn: due at `at`. */
export function moveOneUpdate(destinationId: string, now: number, started: number, at: number): Doc[] {
  return changeDeliveries(destinationId, { $and: [claimableAtExpr(now), { $eq: ["$$d.started", started] }] }, { nextAttemptAt: at });
}

/** probedDelivery: the held delivery pending, due now, claimed. */
export function probeOneUpdate(destinationId: string, owner: string, now: number, claimMs: number): Doc[] {
  return changeDeliveries(destinationId, heldExpr, {
    state: "pending",
    nextAttemptAt: now,
    started: { $add: ["$$d.started", 1] },
    claimOwner: { $literal: owner },
    claimUntil: now + claimMs,
  });
}

/** releasedDelivery: the held delivery pending, due at `at`. */
export function releaseOneUpdate(destinationId: string, at: number): Doc[] {
  return changeDeliveries(destinationId, heldExpr, { state: "pending", nextAttemptAt: at });
}
