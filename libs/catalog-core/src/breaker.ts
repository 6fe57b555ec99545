import { BREAKER_DEFAULTS, DRAIN_PER_SECOND, MAX_PROBE_DELAY_MS, type BreakerState } from "@whc/api-model";
import { destinationsOf } from "@whc/api-model/present";
import type { AttemptTransition } from "@whc/ports";
import type { AttemptRecord, EndpointRecord } from "./types.js";

/**
 * Delivery control (design §18; ADRs 0087 and 0088): each destination's rate limit, breaker and
 * pause, decided by the catalog when a delivery is claimed and when an attempt is recorded, so
 * that every replay replica, however many, obeys one decision. These functions are the
 * reference every store applies (the SQLite store as they are; the MongoDB documents are
 * checked against them), as delivery.ts is for the deliveries themselves.
 */

/** A destination's control as its endpoint's settings give it (defaults where none are set). */
export interface DestinationControl {
  destinationId: string;
  endpointId: string;
  accountId: string;
  name: string;
  failures: number;
  probeAfterMs: number;
  paused: boolean;
  /** The rate limit as the spacing of two sends, ms (1000/perSecond, 60000/perMinute); undefined: none. */
  spacingMs: number | undefined;
  /** Deliveries in flight at once, at most; undefined: no limit. */
  concurrency: number | undefined;
}

/** The stored breaker of one destination: a row (a document) per destination that needed one. */
export interface BreakerRecord {
  destinationId: string;
  endpointId: string;
  accountId: string;
  state: BreakerState;
  /** When it entered its state; undefined: closed ever since the destination was made. */
  since: number | undefined;
  consecutiveFailures: number;
  /** The delay before the next probe: probeAfterMs, doubled after each failed probe, up to MAX_PROBE_DELAY_MS. */
  probeDelayMs: number;
  /** Open: when a held delivery is tried. Half-open: when the probe counts as lost (its event gone) and another is picked. */
  nextProbeAt: number | undefined;
  /**
   * The one held delivery let through (by its event): the probe while half-open; while closed
   * and still holding, the drain's current one (the next is let go once it settles).
   */
  probeEventId: string | undefined;
  /**
   * Some of its deliveries are held. Closed and not paused, it is draining: they are let go one
   * at a time, oldest first, paced (drainTurn), and deliveries arriving meanwhile queue behind them.
   */
  holding: boolean;
  /** The rate limit's next free turn (the theoretical arrival time of a spaced sender). */
  slotAt: number;
  /** The turn the last delivery moved to wait for the rate limit is due at (0: none): the next one waits after it. */
  queuedUntil: number;
  /** When the drain's last delivery was let go (due): the next goes a spacing after it. */
  drainedAt: number;
}

/** A breaker as the endpoint shows it: its record with its held deliveries counted. */
export interface BreakerView extends BreakerRecord {
  held: number;
}

/** How far apart held deliveries are released without a rate limit: DRAIN_PER_SECOND a second. */
export const DRAIN_SPACING_MS = 1000 / DRAIN_PER_SECOND;

/** Every destination of the endpoint with its control; [] without destinations. */
export function destinationControlsOf(endpoint: Pick<EndpointRecord, "id" | "accountId" | "forwardJson">): DestinationControl[] {
  return destinationsOf({ id: endpoint.id, forwardJson: endpoint.forwardJson, targetSecretSet: false }).map((d) => ({
    destinationId: d.id,
    endpointId: endpoint.id,
    accountId: endpoint.accountId,
    name: d.name,
    failures: d.breaker?.failures ?? BREAKER_DEFAULTS.failures,
    probeAfterMs: d.breaker?.probeAfterMs ?? BREAKER_DEFAULTS.probeAfterMs,
    paused: d.paused,
    spacingMs: d.rateLimit?.perSecond ? 1000 / d.rateLimit.perSecond : d.rateLimit?.perMinute ? 60_000 / d.rateLimit.perMinute : undefined,
    concurrency: d.rateLimit?.concurrency,
  }));
}

/**
 * Reads each endpoint's controls once per forward_json: a claim meets the same few endpoints
 * over and over, and parsing their destinations (transforms and all) each time would cost more
 * than the claim.
 */
export function createControlCache(max = 1000) {
  const cache = new Map<string, { json: string; controls: Map<string, DestinationControl> }>();
  return (endpoint: Pick<EndpointRecord, "id" | "accountId" | "forwardJson">): Map<string, DestinationControl> => {
    const hit = cache.get(endpoint.id);
    if (hit && hit.json === endpoint.forwardJson) return hit.controls;
    const controls = new Map(destinationControlsOf(endpoint).map((c) => [c.destinationId, c]));
    if (cache.size >= max) cache.delete(cache.keys().next().value!);
    cache.set(endpoint.id, { json: endpoint.forwardJson, controls });
    return controls;
  };
}

/** A destination's breaker before anything happened to it. */
export function newBreaker(control: Pick<DestinationControl, "destinationId" | "endpointId" | "accountId" | "probeAfterMs">): BreakerRecord {
  return {
    destinationId: control.destinationId,
    endpointId: control.endpointId,
    accountId: control.accountId,
    state: "closed",
    since: undefined,
    consecutiveFailures: 0,
    probeDelayMs: control.probeAfterMs,
    nextProbeAt: undefined,
    probeEventId: undefined,
    holding: false,
    slotAt: 0,
    queuedUntil: 0,
    drainedAt: 0,
  };
}

/**
 * Its deliveries are held: open, half-open, paused, or draining (closed with held deliveries:
 * they go one at a time, and new ones queue behind them, so the drain keeps their order).
 */
export function holdsDeliveries(control: Pick<DestinationControl, "paused">, b: Pick<BreakerRecord, "state" | "holding">): boolean {
  return control.paused || b.state !== "closed" || b.holding;
}

/** The delivery of `eventId` is the one let through: the half-open breaker's probe, or the drain's current one. */
export function isLetThrough(control: Pick<DestinationControl, "paused">, b: Pick<BreakerRecord, "state" | "probeEventId">, eventId: string): boolean {
  return !control.paused && b.state !== "open" && b.probeEventId === eventId;
}

/**
 * What a claim does with a due delivery of a controlled destination:
 * - `hold`: the destination holds (open, half-open for another delivery, or paused);
 * - `busy`: as many of its deliveries as `concurrency` are in flight: left as it is, due;
 * - `wait`: its rate limit's next turn is later: it stays pending, due then;
 * - `go`: claimed (taking the turn: takeTurn).
 * `letThrough`: the delivery is the one let through (isLetThrough: the probe, or the drain's
 * current one), due, or its claim lapsed: it goes.
 */
export type Gate = { kind: "hold" } | { kind: "busy" } | { kind: "wait"; until: number } | { kind: "go" };

export function gateOf(control: DestinationControl, b: BreakerRecord, inFlight: number, now: number, letThrough: boolean): Gate {
  if (holdsDeliveries(control, b) && !letThrough) return { kind: "hold" };
  if (control.concurrency !== undefined && inFlight >= control.concurrency) return { kind: "busy" };
  if (control.spacingMs !== undefined && b.slotAt > now) return { kind: "wait", until: b.slotAt };
  return { kind: "go" };
}

/**
 * The breaker after a claim took the rate limit's turn: the next one is spacingMs later. The turn
 * is the claim's own time: a claim that comes late (a timer's and a round trip's worth, more on a
 * loaded machine) moves the next turn as late, so the lateness that also delays sends widens the
 * spacing instead of bunching them (ADR 0087).
 */
export function takeTurn(b: BreakerRecord, control: Pick<DestinationControl, "spacingMs">, now: number): BreakerRecord {
  if (control.spacingMs === undefined) return b;
  return { ...b, slotAt: Math.max(b.slotAt, now) + control.spacingMs };
}

/**
 * A rate-limited destination's delivery is sent this long after its turn (ADR 0087): the
 * claim's commit and the replica's preparation (loading, opening, transforming, the egress
 * lease) take a varying part of this instead of shifting the send.
 */
export const PACED_SEND_DELAY_MS = 300;

/** What a claim tells the worker of a delivery it lets go (gate `go`): send it PACED_SEND_DELAY_MS after its turn, the claim's time. */
export function sendAfterMsOf(control: Pick<DestinationControl, "spacingMs"> | undefined): number | undefined {
  return control?.spacingMs === undefined ? undefined : PACED_SEND_DELAY_MS;
}

/** At most this many due deliveries a claim moves to their turns; the others wait for the next claim. */
export const MAX_WAITS_PER_CLAIM = 1000;

/**
 * A delivery a claim found waiting for its destination's rate limit (`until`, its next free
 * turn): due a turn after the last one moved (queuedUntil), so the waiting ones come due one at
 * a time, in the order they were met, across claims; the breaker remembers its turn.
 */
export function waitingTurn(b: BreakerRecord, control: Pick<DestinationControl, "spacingMs">, until: number, now: number): { at: number; breaker: BreakerRecord } {
  const after = b.queuedUntil > now ? b.queuedUntil + (control.spacingMs ?? 0) : 0;
  // Kept exact (fractional turns do not drift); due in whole ms, never early.
  const exact = Math.max(until, after);
  return { at: Math.ceil(exact), breaker: { ...b, queuedUntil: exact } };
}

/** An open breaker (not paused) whose probe is due; a half-open one whose probe was lost. */
export function probeDue(control: Pick<DestinationControl, "paused">, b: BreakerRecord, now: number): boolean {
  return !control.paused && b.state !== "closed" && b.nextProbeAt !== undefined && b.nextProbeAt <= now;
}

/**
 * The breaker once the held delivery of `eventId` was claimed as its probe. If that probe is
 * lost (its event deleted, say), another is picked after the claim and the probe delay.
 */
export function probing(b: BreakerRecord, eventId: string, now: number, claimMs: number): BreakerRecord {
  return { ...b, state: "half_open", since: now, probeEventId: eventId, nextProbeAt: now + claimMs + b.probeDelayMs };
}

/**
 * What an attempt says of its destination: `success` (2xx) and `answer` (another status but 408,
 * 429 and 5xx: the destination is there) close the breaker; `failure` (a network error, a
 * timeout, 408, 429, 5xx) counts towards opening it; `none` (nothing reached the destination:
 * a refused target, no egress capacity, a transform's failure, a skip) says nothing.
 */
export type BreakerOutcome = "success" | "answer" | "failure" | "none";

const NETWORK_ERRORS = new Set(["dns_failure", "connection_refused", "connection_reset", "timeout", "tls_error", "too_many_redirects", "host_unreachable", "protocol_error"]);

export function breakerOutcomeOf(attempt: Pick<AttemptRecord, "status" | "error">): BreakerOutcome {
  if (attempt.status >= 200 && attempt.status <= 299) return "success";
  if (attempt.status === 408 || attempt.status === 429 || attempt.status >= 500) return "failure";
  if (attempt.status > 0) return "answer";
  return NETWORK_ERRORS.has(attempt.error) ? "failure" : "none";
}

/** What recording one outbox attempt did to the breaker. */
export interface BreakerChange {
  breaker: BreakerRecord;
  /** It went from closed to open (destination.opened). */
  opened: boolean;
  /** It went from open or half-open to closed (destination.closed). */
  closed: boolean;
}

/**
 * The breaker after an outbox attempt of its destination was recorded (its claim held). A
 * success or an answer closes it (and resets the count); a failure counts, and opens a closed
 * breaker at `failures` in a row; a failed probe re-opens it with twice the delay (up to
 * MAX_PROBE_DELAY_MS); a probe that reached nothing re-opens it with the same delay.
 */
export function recordedBreaker(b: BreakerRecord, control: DestinationControl, outcome: BreakerOutcome, isProbe: boolean, now: number): BreakerChange {
  const unchanged = { breaker: b, opened: false, closed: false };
  if (outcome === "success" || outcome === "answer") {
    if (b.state === "closed") return b.consecutiveFailures === 0 ? unchanged : { ...unchanged, breaker: { ...b, consecutiveFailures: 0 } };
    const breaker: BreakerRecord = {
      ...b,
      state: "closed",
      since: now,
      consecutiveFailures: 0,
      probeDelayMs: control.probeAfterMs,
      nextProbeAt: undefined,
      probeEventId: undefined,
      // The drain paces the held ones; nothing waits before them. The probe was the first.
      queuedUntil: 0,
      drainedAt: now,
    };
    return { breaker, opened: false, closed: true };
  }
  if (outcome === "none") {
    if (!(isProbe && b.state === "half_open")) return unchanged;
    return { ...unchanged, breaker: reopened(b, b.probeDelayMs, now) };
  }
  const failures = b.consecutiveFailures + 1;
  if (b.state === "closed") {
    if (failures < control.failures) return { ...unchanged, breaker: { ...b, consecutiveFailures: failures } };
    const breaker: BreakerRecord = {
      ...b,
      state: "open",
      since: now,
      consecutiveFailures: failures,
      probeDelayMs: control.probeAfterMs,
      nextProbeAt: now + control.probeAfterMs,
      probeEventId: undefined,
      queuedUntil: 0,
    };
    return { breaker, opened: true, closed: false };
  }
  if (isProbe && b.state === "half_open") {
    return { ...unchanged, breaker: { ...reopened(b, Math.min(b.probeDelayMs * 2, MAX_PROBE_DELAY_MS), now), consecutiveFailures: failures } };
  }
  return { ...unchanged, breaker: { ...b, consecutiveFailures: failures } };
}

function reopened(b: BreakerRecord, delayMs: number, now: number): BreakerRecord {
  return { ...b, state: "open", since: now, probeDelayMs: delayMs, nextProbeAt: now + delayMs, probeEventId: undefined };
}

/**
 * The worker's verdict as the store applies it: while the destination holds (after this
 * attempt), a retry (`pending`) is held instead, and so is `exhausted` when the attempt failed
 * for the destination's fault (design §18: held deliveries never expire). Any other verdict
 * stands.
 */
export function heldTransition(transition: AttemptTransition, holds: boolean, outcome: BreakerOutcome): AttemptTransition {
  if (transition.kind !== "worker" || !holds) return transition;
  if (transition.state === "pending" || (transition.state === "exhausted" && outcome === "failure")) {
    return { kind: "worker", owner: transition.owner, state: "held", nextAttemptAt: undefined };
  }
  return transition;
}

/**
 * The drain's next turn (a destination closed and not paused with held deliveries, design §18):
 * its oldest held delivery is let go, due a spacing after the last one (its rate limit's, or
 * DRAIN_SPACING_MS: 10 a second), once the one before settled. One at a time, so they arrive in
 * their order whatever the replicas' timing.
 */
export function drainTurn(b: BreakerRecord, control: Pick<DestinationControl, "spacingMs"> | undefined, eventId: string, now: number): { at: number; breaker: BreakerRecord } {
  const at = Math.ceil(Math.max(now, b.drainedAt + (control?.spacingMs ?? DRAIN_SPACING_MS)));
  return { at, breaker: { ...b, probeEventId: eventId, drainedAt: at } };
}

/** The drain is over (nothing held any more): closed and holding nothing. */
export function drained(b: BreakerRecord): BreakerRecord {
  return { ...b, holding: false, probeEventId: undefined };
}

/**
 * Whether the drain lets its next delivery go: closed, not paused, holding, and its current one
 * (if any) no longer waiting (`current`: that delivery's state now; undefined when it is gone).
 */
export function drainsNext(control: Pick<DestinationControl, "paused"> | undefined, b: BreakerRecord, current: string | undefined): boolean {
  if ((control?.paused ?? false) || b.state !== "closed" || !b.holding) return false;
  return b.probeEventId === undefined || current !== "pending";
}
