import type { AttemptRecord, DeliveryRecord, NewDelivery, NewEvent } from "./types.js";
import { aggregateDeliveryState, type DeliveryState } from "@whc/api-model";
import type { AttemptTransition } from "@whc/ports";

/**
 * One of an event's deliveries as a store keeps it (one per destination, design §17): the
 * DeliveryRecord without its destination and attempts, plus what the outbox needs, the claim
 * and the attempt counter. These functions are the reference for
 * every store (the SQLite store applies them as they are; the MongoDB documents are checked
 * against them), as applyEndpointPatch is for endpoint updates.
 */
export interface DeliveryProgress {
  /** Undefined: never forwarded. */
  state: DeliveryState | undefined;
  target: string;
  /** Set while the delivery waits in the outbox (due at this time). */
  nextAttemptAt: number | undefined;
  /** Who claimed it last, until when; both undefined when nobody holds it. */
  claimOwner: string | undefined;
  claimUntil: number | undefined;
  /** Attempt numbers given out so far: the next one is started + 1. */
  started: number;
  /**
   * Attempts that ended with the delivery held (design §18: held never consumes attempts): the
   * next attempt counts as started + 1 - spared against maxAttempts (countedAttempt).
   */
  spared: number;
}

export const NEVER_FORWARDED: DeliveryProgress = {
  state: undefined,
  target: "",
  nextAttemptAt: undefined,
  claimOwner: undefined,
  claimUntil: undefined,
  started: 0,
  spared: 0,
};

const RELEASED = { claimOwner: undefined, claimUntil: undefined } as const;

/**
 * What an append stores for each delivery of a capture of a relay (scheduled) or proxy
 * endpoint: pending (a relay's in the outbox, due at once); a duplicate's `duplicate`, never
 * in the outbox (design §17). A proxy's delivery is appended with its first attempt begun: the
 * proxy makes attempt 1 right after the append (ForwardEvent, trigger `initial`) without a
 * write of its own to take the number (ADR 0098); any other attempt takes 2 or later.
 */
export function appendedDeliveries(
  forward: NonNullable<NewEvent["forward"]>,
  receivedAt: number,
  duplicate = false,
): { destinationId: string; progress: DeliveryProgress }[] {
  return forward.deliveries.map((d: NewDelivery) => ({
    destinationId: d.destinationId,
    progress: duplicate
      ? { ...NEVER_FORWARDED, state: "duplicate", target: d.target }
      : forward.scheduled
        ? { ...NEVER_FORWARDED, state: "pending", target: d.target, nextAttemptAt: receivedAt }
        : { ...NEVER_FORWARDED, state: "pending", target: d.target, started: 1 },
  }));
}

/**
 * When the delivery can next be claimed: its due time, or its claim's end when that is later;
 * undefined when it is not in the outbox (not pending, or pending outside it: a proxy's, a
 * direct attempt's). What a worker that found nothing due waits for (nextDueAt).
 */
export function claimableAt(p: DeliveryProgress): number | undefined {
  if (p.state !== "pending" || p.nextAttemptAt === undefined) return undefined;
  return p.claimUntil === undefined ? p.nextAttemptAt : Math.max(p.nextAttemptAt, p.claimUntil);
}

/** The event's forward state over its deliveries (design §17); undefined without any. */
export function aggregateOf(deliveries: readonly Pick<DeliveryProgress, "state">[]): DeliveryState | undefined {
  return aggregateDeliveryState(deliveries.flatMap((d) => (d.state === undefined ? [] : [d.state])));
}

/** In the outbox, due, and not held by an unexpired claim. */
export function isClaimable(p: DeliveryProgress, now: number): boolean {
  return (
    p.state === "pending" &&
    p.nextAttemptAt !== undefined &&
    p.nextAttemptAt <= now &&
    (p.claimUntil === undefined || p.claimUntil <= now)
  );
}

/** A claim takes the next attempt number and hides the delivery until now + claimMs. */
export function claimedDelivery(p: DeliveryProgress, owner: string, now: number, claimMs: number): DeliveryProgress {
  return { ...p, started: p.started + 1, claimOwner: owner, claimUntil: now + claimMs };
}

/**
 * The claim of the delivery its destination lets through while holding (the breaker's probe,
 * the drain's current one, breaker.ts isLetThrough). An earlier claim of it that lapsed
 * unrecorded (its worker killed, or the catalog unreachable for the record) was an attempt
 * made while the destination held, and is spared like one (design §18: held never consumes
 * attempts); else a probe interrupted once or twice would exhaust a delivery that must wait
 * for its destination. A claim left on it means exactly that: a recorded attempt releases it.
 */
export function letThroughClaim(p: DeliveryProgress, owner: string, now: number, claimMs: number): DeliveryProgress {
  return claimedDelivery(p.claimOwner === undefined ? p : { ...p, spared: p.spared + 1 }, owner, now, claimMs);
}

/** An attempt outside the outbox takes the next number; a first one creates the record. */
export function begunDelivery(p: DeliveryProgress, target: string): DeliveryProgress {
  if (p.state === undefined) return { ...NEVER_FORWARDED, state: "pending", target, started: p.started + 1 };
  return { ...p, started: p.started + 1 };
}

/** The attempt number `n` of this delivery as counted against maxAttempts: without the spared ones. */
export function countedAttempt(p: Pick<DeliveryProgress, "spared">, n: number): number {
  return n - p.spared;
}

/** Held (design §18): out of the outbox, unclaimed, until its destination lets it go. */
export function heldDelivery(p: DeliveryProgress): DeliveryProgress {
  return { ...p, ...RELEASED, state: "held", nextAttemptAt: undefined };
}

/** A held delivery let go: pending again, due at `dueAt`. */
export function releasedDelivery(p: DeliveryProgress, dueAt: number): DeliveryProgress {
  return { ...p, state: "pending", nextAttemptAt: dueAt };
}

/** A held delivery claimed as its breaker's probe: pending, due now, claimed with its next number. */
export function probedDelivery(p: DeliveryProgress, owner: string, now: number, claimMs: number): DeliveryProgress {
  return claimedDelivery({ ...p, state: "pending", nextAttemptAt: now }, owner, now, claimMs);
}

/** The worker's claim still holds: nobody took a later attempt number since. */
export function claimHolds(p: DeliveryProgress, owner: string, n: number): boolean {
  return p.state === "pending" && p.claimOwner === owner && p.started === n;
}

export function isSuccessStatus(status: number): boolean {
  return status >= 200 && status <= 299;
}

/**
 * The delivery after an attempt was recorded (AttemptTransition says how). An attempt on an
 * event without a record creates it as if it had begun (pending, towards the attempt's url);
 * the counter never goes below a recorded attempt's number, so that number is never given
 * out again. Stores keep the first record of an attempt number: recording the same number
 * again (a retried call) changes nothing, and this is not applied.
 */
export function recordedDelivery(p: DeliveryProgress, attempt: AttemptRecord, transition: AttemptTransition): DeliveryProgress {
  const base: DeliveryProgress = {
    ...p,
    state: p.state ?? "pending",
    target: p.state === undefined ? attempt.url : p.target,
    started: Math.max(p.started, attempt.n),
  };
  if (transition.kind === "worker") {
    if (!claimHolds(p, transition.owner, attempt.n)) return base;
    // The store made the verdict `held` (heldTransition): the attempt is not counted.
    if (transition.state === "held") return { ...heldDelivery(base), spared: base.spared + 1 };
    const nextAttemptAt = transition.state === "pending" ? transition.nextAttemptAt : undefined;
    return { ...base, ...RELEASED, state: transition.state, nextAttemptAt };
  }
  if (isSuccessStatus(attempt.status)) return { ...base, ...RELEASED, state: "delivered", nextAttemptAt: undefined };
  // A delivery waiting (in the outbox, or held) keeps waiting after a failed direct attempt.
  if ((p.state === "pending" && p.nextAttemptAt !== undefined) || p.state === "held") return base;
  return { ...base, ...RELEASED, state: "failed", nextAttemptAt: undefined };
}

/** The DeliveryRecord a delivery and its attempts make; undefined when never forwarded. */
export function deliveryRecordOf(destinationId: string, p: DeliveryProgress, attempts: AttemptRecord[]): DeliveryRecord | undefined {
  if (p.state === undefined) return undefined;
  return { destinationId, state: p.state, target: p.target, nextAttemptAt: p.nextAttemptAt, attempts };
}

/**
 * The destination of the delivery an ingest from before destinations appended (one target,
 * no destination id): the endpoint's one destination of that time, whose id is the
 * endpoint's (@whc/api-model/present destinationsOf reads such an endpoint's settings so).
 */
export function legacyDestinationId(endpointId: string): string {
  return endpointId;
}
