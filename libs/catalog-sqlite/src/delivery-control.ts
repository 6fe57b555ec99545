import type Database from "better-sqlite3";
import {
  breakerOutcomeOf,
  claimHolds,
  createControlCache,
  gateOf,
  heldTransition,
  holdsDeliveries,
  newBreaker,
  probeDue,
  probing,
  recordedBreaker,
  drainTurn,
  drained,
  drainsNext,
  isLetThrough,
  takeTurn,
  waitingTurn,
  MAX_WAITS_PER_CLAIM,
  sendAfterMsOf,
  type AttemptRecord,
  type BreakerNotice,
  type BreakerRecord,
  type BreakerView,
  type DeliveryClaim,
  type DeliveryProgress,
  type DestinationControl,
} from "@whc/catalog-core";
import type { AttemptTransition, DeliveryRef } from "@whc/ports";
import { BREAKER_UPSERT_SQL, breakerRows, type Row } from "./rows.js";

interface Candidate {
  id: number;
  seq: number;
  destination_id: string;
  event_id: string;
  endpoint_id: string;
  account_id: string;
}

interface Claimed {
  started: number;
  spared: number;
  /** A bulk redelivery job's delivery (ADR 0089): the job and the attempts it had then. */
  bulk_job_id: string | null;
  attempt_base: number;
}

/** A breaker read in a transaction (a new one when none is stored), written back at its end when it changed. */
interface Loaded {
  before: BreakerRecord;
  now: BreakerRecord;
}

/**
 * A claim's candidates (parameters: now, the destinations to leave out as a JSON array, limit):
 * oldest claimable first, through the partial index deliveries_outbox, as claims were before
 * delivery control.
 */
export const CANDIDATES_SQL = `SELECT d.id, d.seq, d.destination_id, e.id AS event_id, e.endpoint_id, e.account_id
  FROM deliveries d INDEXED BY deliveries_outbox JOIN events e ON e.seq = d.seq
  WHERE d.claimable_at IS NOT NULL AND d.claimable_at <= ? AND d.destination_id NOT IN (SELECT value FROM json_each(?))
  ORDER BY d.claimable_at, d.seq LIMIT ?`;

export interface DeliveryControl {
  /** The claim (runs inside the claim's IMMEDIATE transaction). */
  claim(owner: string, now: number, claimMs: number, limit: number): { claims: DeliveryClaim[]; limiterWaits: number };
  /**
   * Inside the record's transaction, before the delivery is written: the transition to apply
   * and what becomes of the breaker; `commit` writes the breaker once the delivery is written.
   */
  recording(ref: DeliveryRef, endpointId: string, current: DeliveryProgress, attempt: AttemptRecord, transition: AttemptTransition, now: number): {
    transition: AttemptTransition;
    commit: (after: DeliveryProgress) => BreakerNotice | undefined;
  };
  settle(endpointId: string, now: number): void;
  breakers(endpointIds: readonly string[]): BreakerView[];
  active(): BreakerView[];
  /** The earliest probe due after `after`: when a worker should look again. */
  nextProbeAfter(after: number): number | undefined;
}

/** The statements and the small steps every decision shares. */
function controlBase(db: Database.Database) {
  const controlsOf = createControlCache();
  const stmt = {
    endpoint: db.prepare("SELECT id, account_id AS accountId, forward_json AS forwardJson FROM endpoints WHERE id = ?"),
    breaker: db.prepare("SELECT * FROM destination_breakers WHERE destination_id = ?"),
    writeBreaker: db.prepare(BREAKER_UPSERT_SQL),
    deleteBreaker: db.prepare("DELETE FROM destination_breakers WHERE destination_id = ?"),
    breakersOf: db.prepare("SELECT * FROM destination_breakers WHERE endpoint_id IN (SELECT value FROM json_each(?))"),
    active: db.prepare("SELECT * FROM destination_breakers WHERE holding = 1 OR state <> 'closed'"),
    probesDue: db.prepare("SELECT * FROM destination_breakers WHERE next_probe_at IS NOT NULL AND next_probe_at <= ? AND state <> 'closed'"),
    // Closed with held deliveries: draining (or paused).
    releasable: db.prepare("SELECT * FROM destination_breakers WHERE holding = 1 AND state = 'closed'"),
    nextProbe: db.prepare("SELECT min(next_probe_at) FROM destination_breakers WHERE next_probe_at IS NOT NULL AND next_probe_at > ? AND state <> 'closed'").pluck(),
    candidates: db.prepare(CANDIDATES_SQL),
    claimOne: db.prepare("UPDATE deliveries SET started = started + 1, claim_owner = ?, claim_until = ?, claimable_at = max(next_at, ?) WHERE id = ? RETURNING started, spared, bulk_job_id, attempt_base"),
    // letThroughClaim: a lapsed claim left on the probe (the drain's current one) is spared.
    claimLetThrough: db.prepare(
      "UPDATE deliveries SET started = started + 1, spared = spared + (claim_owner IS NOT NULL), claim_owner = ?, claim_until = ?, claimable_at = max(next_at, ?) WHERE id = ? RETURNING started, spared, bulk_job_id, attempt_base",
    ),
    holdOne: db.prepare("UPDATE deliveries SET state = 'held', next_at = NULL, claimable_at = NULL, claim_owner = NULL, claim_until = NULL WHERE id = ?"),
    moveOne: db.prepare("UPDATE deliveries SET next_at = ?, claimable_at = ? WHERE id = ?"),
    inFlight: db.prepare(
      "SELECT count(*) FROM deliveries INDEXED BY deliveries_claimed WHERE destination_id = ? AND claim_until IS NOT NULL AND claim_until > ? AND state = 'pending'",
    ).pluck(),
    oldestHeld: db.prepare(
      "SELECT d.id, e.id AS event_id FROM deliveries d INDEXED BY deliveries_held JOIN events e ON e.seq = d.seq WHERE d.destination_id = ? AND d.state = 'held' ORDER BY d.seq LIMIT 1",
    ),
    probeOne: db.prepare(
      "UPDATE deliveries SET state = 'pending', next_at = ?, started = started + 1, claim_owner = ?, claim_until = ?, claimable_at = ? WHERE id = ? RETURNING started, spared, bulk_job_id, attempt_base",
    ),
    heldIds: db.prepare("SELECT id FROM deliveries INDEXED BY deliveries_held WHERE destination_id = ? AND state = 'held' ORDER BY seq").pluck(),
    releaseOne: db.prepare("UPDATE deliveries SET state = 'pending', next_at = ?, claimable_at = ? WHERE id = ?"),
    // Waiting in the outbox and not in flight: held. Walks the outbox's partial index.
    holdWaiting: db.prepare(`UPDATE deliveries INDEXED BY deliveries_outbox SET state = 'held', next_at = NULL, claimable_at = NULL, claim_owner = NULL, claim_until = NULL
      WHERE claimable_at IS NOT NULL AND destination_id = ? AND state = 'pending' AND (claim_until IS NULL OR claim_until <= ?)`),
    heldCount: db.prepare("SELECT count(*) FROM deliveries INDEXED BY deliveries_held WHERE destination_id = ? AND state = 'held'").pluck(),
    deliveryState: db.prepare("SELECT d.state FROM deliveries d JOIN events e ON e.seq = d.seq WHERE e.id = ? AND d.destination_id = ?").pluck(),
  };

  const controlOf = (endpointId: string, destinationId: string): DestinationControl | undefined => {
    const row = stmt.endpoint.get(endpointId) as { id: string; accountId: string; forwardJson: string } | undefined;
    return row ? controlsOf(row).get(destinationId) : undefined;
  };
  const readBreaker = (destinationId: string): BreakerRecord | undefined => {
    const row = stmt.breaker.get(destinationId) as Row | undefined;
    return row ? breakerRows.read(row) : undefined;
  };
  const writeBreaker = (b: BreakerRecord) => stmt.writeBreaker.run(breakerRows.values(b));
  const changed = (l: Loaded) => JSON.stringify(l.before) !== JSON.stringify(l.now);
  const viewOf = (b: BreakerRecord): BreakerView => ({ ...b, held: b.holding ? (stmt.heldCount.get(b.destinationId) as number) : 0 });
  const claimOf = (c: Candidate, r: Claimed): DeliveryClaim => ({
    accountId: c.account_id,
    endpointId: c.endpoint_id,
    eventId: c.event_id,
    destinationId: c.destination_id,
    attempt: r.started,
    ...(r.spared > 0 ? { counted: r.started - r.spared } : {}),
    ...(r.bulk_job_id !== null ? { bulkJobId: r.bulk_job_id, attemptBase: r.attempt_base } : {}),
  });

  /** Lets every held delivery of a destination gone go at once (each then fails as not configured). */
  function releaseAll(destinationId: string, now: number): void {
    for (const id of stmt.heldIds.all(destinationId) as number[]) stmt.releaseOne.run(now, now, id);
  }

  /**
   * The drain's step (drainsNext, drainTurn): once the delivery let through settled, the oldest
   * held one is let go at its turn; with none left, the drain is over. Answers the breaker after.
   */
  function drainStep(b: BreakerRecord, control: DestinationControl | undefined, now: number): BreakerRecord {
    const current = b.probeEventId === undefined ? undefined : (stmt.deliveryState.get(b.probeEventId, b.destinationId) as string | undefined);
    if (!drainsNext(control, b, current)) return b;
    const next = stmt.oldestHeld.get(b.destinationId) as { id: number; event_id: string } | undefined;
    if (!next) return drained(b);
    const turn = drainTurn(b, control, next.event_id, now);
    stmt.releaseOne.run(turn.at, turn.at, next.id);
    return turn.breaker;
  }

  /** Drains what no longer has to be held; forgets the breakers of destinations gone. */
  function releaseSettled(rows: readonly BreakerRecord[], now: number): void {
    for (const b of rows) {
      const control = controlOf(b.endpointId, b.destinationId);
      if (!control) {
        releaseAll(b.destinationId, now);
        stmt.deleteBreaker.run(b.destinationId);
        continue;
      }
      const after = drainStep(b, control, now);
      if (changed({ before: b, now: after })) writeBreaker(after);
    }
  }
  return { stmt, controlsOf, controlOf, readBreaker, writeBreaker, changed, viewOf, claimOf, drainStep, releaseSettled };
}

type Base = ReturnType<typeof controlBase>;

/** The claim (inside its IMMEDIATE transaction): releases, probes, then due deliveries through their gates. */
function claimWith(base: Base, owner: string, now: number, claimMs: number, limit: number) {
  const { stmt, readBreaker, writeBreaker, changed, claimOf, releaseSettled } = base;
  // Each endpoint's destinations read once per claim, however many of its deliveries are due.
  const endpoints = new Map<string, Map<string, DestinationControl> | undefined>();
  const controlOf = (endpointId: string, destinationId: string): DestinationControl | undefined => {
    if (!endpoints.has(endpointId)) {
      const row = stmt.endpoint.get(endpointId) as { id: string; accountId: string; forwardJson: string } | undefined;
      endpoints.set(endpointId, row ? base.controlsOf(row) : undefined);
    }
    return endpoints.get(endpointId)?.get(destinationId);
  };
  const claimUntil = now + claimMs;
  releaseSettled((stmt.releasable.all() as Row[]).map(breakerRows.read), now);

  const loaded = new Map<string, Loaded>();
  const breakerFor = (control: DestinationControl): Loaded => {
    let l = loaded.get(control.destinationId);
    if (!l) {
      const before = readBreaker(control.destinationId) ?? newBreaker(control);
      l = { before, now: before };
      loaded.set(control.destinationId, l);
    }
    return l;
  };
  const claims: DeliveryClaim[] = [];

  // Probes first: one held delivery per open breaker whose probe is due.
  for (const b of (stmt.probesDue.all(now) as Row[]).map(breakerRows.read)) {
    if (claims.length >= limit) break;
    const control = controlOf(b.endpointId, b.destinationId);
    if (!control) {
      releaseSettled([b], now);
      continue;
    }
    if (!probeDue(control, b, now)) continue;
    const held = stmt.oldestHeld.get(b.destinationId) as { id: number; event_id: string } | undefined;
    if (!held) continue;
    const r = stmt.probeOne.get(now, owner, claimUntil, claimUntil, held.id) as Claimed;
    const l = breakerFor(control);
    l.now = probing(l.now, held.event_id, now, claimMs);
    claims.push(claimOf({ id: held.id, seq: 0, destination_id: b.destinationId, event_id: held.event_id, endpoint_id: b.endpointId, account_id: b.accountId }, r));
  }

  const busy = new Set<string>();
  const inFlight = new Map<string, number>();
  const waiting = new Map<string, number>();
  let limiterWaits = 0;
  for (;;) {
    const room = limit - claims.length;
    if (room <= 0) break;
    const page = stmt.candidates.all(now, JSON.stringify([...busy]), room) as Candidate[];
    if (page.length === 0) break;
    for (const c of page) {
      if (busy.has(c.destination_id)) continue;
      const control = controlOf(c.endpoint_id, c.destination_id);
      if (!control) {
        claims.push(claimOf(c, stmt.claimOne.get(owner, claimUntil, claimUntil, c.id) as Claimed));
        continue;
      }
      const l = breakerFor(control);
      const flying = inFlight.get(c.destination_id) ?? (control.concurrency === undefined ? 0 : (stmt.inFlight.get(c.destination_id, now) as number));
      const letThrough = isLetThrough(control, l.now, c.event_id);
      const gate = gateOf(control, l.now, flying, now, letThrough);
      if (gate.kind === "hold") {
        stmt.holdOne.run(c.id);
        l.now = { ...l.now, holding: true };
      } else if (gate.kind === "busy") {
        busy.add(c.destination_id);
      } else if (gate.kind === "wait") {
        const turn = waitingTurn(l.now, control, gate.until, now);
        stmt.moveOne.run(turn.at, turn.at, c.id);
        l.now = turn.breaker;
        limiterWaits += 1;
        // A long backlog is moved a bounded slice per claim: the write lock is held briefly.
        const k = (waiting.get(c.destination_id) ?? 0) + 1;
        waiting.set(c.destination_id, k);
        if (k >= MAX_WAITS_PER_CLAIM) busy.add(c.destination_id);
      } else {
        const paced = sendAfterMsOf(control);
        const claimed = (letThrough ? stmt.claimLetThrough : stmt.claimOne).get(owner, claimUntil, claimUntil, c.id) as Claimed;
        claims.push({ ...claimOf(c, claimed), ...(paced ? { sendAfterMs: paced } : {}) });
        inFlight.set(c.destination_id, flying + 1);
        l.now = takeTurn(l.now, control, now);
      }
    }
  }
  for (const l of loaded.values()) if (changed(l)) writeBreaker(l.now);
  return { claims, limiterWaits };
}


function recordingWith(
  base: Base,
  ref: DeliveryRef, endpointId: string, current: DeliveryProgress, attempt: AttemptRecord, transition: AttemptTransition, now: number) {
  const { stmt, controlOf, readBreaker, writeBreaker, changed, viewOf, drainStep } = base;
  const none = { transition, commit: () => undefined };
  if (transition.kind !== "worker" || !claimHolds(current, transition.owner, attempt.n)) return none;
  const control = controlOf(endpointId, ref.destinationId);
  if (!control) return none;
  const b0 = readBreaker(ref.destinationId) ?? newBreaker(control);
  const outcome = breakerOutcomeOf(attempt);
  const change = recordedBreaker(b0, control, outcome, b0.state === "half_open" && b0.probeEventId === ref.eventId, now);
  const applied = heldTransition(transition, holdsDeliveries(control, change.breaker), outcome);
  return {
    transition: applied,
    commit: (after: DeliveryProgress): BreakerNotice | undefined => {
      let b = change.breaker;
      if (after.state === "held") b = { ...b, holding: true };
      if (change.opened && stmt.holdWaiting.run(ref.destinationId, now).changes > 0) b = { ...b, holding: true };
      // Closed by this attempt, or the drain's current delivery settled: the drain goes on.
      b = drainStep(b, control, now);
      if (changed({ before: b0, now: b })) writeBreaker(b);
      if (!change.opened && !change.closed) return undefined;
      return { change: change.opened ? "opened" : "closed", name: control.name, breaker: viewOf(b) };
    },
  };
}

function settleWith(base: Base, endpointId: string, now: number): void {
  const { stmt, controlsOf, writeBreaker, changed, drainStep, releaseSettled } = base;
  const row = stmt.endpoint.get(endpointId) as { id: string; accountId: string; forwardJson: string } | undefined;
  const stored = (stmt.breakersOf.all(JSON.stringify([endpointId])) as Row[]).map(breakerRows.read);
  const controls = row ? controlsOf(row) : new Map<string, DestinationControl>();
  releaseSettled(
    stored.filter((b) => !controls.has(b.destinationId)),
    now,
  );
  for (const control of controls.values()) {
    const before = stored.find((b) => b.destinationId === control.destinationId) ?? newBreaker(control);
    let b = before;
    if (control.paused && stmt.holdWaiting.run(control.destinationId, now).changes > 0) b = { ...b, holding: true };
    b = drainStep(b, control, now);
    if (changed({ before, now: b })) writeBreaker(b);
  }
}

/**
 * Delivery control on the embedded catalog (design §18; ADRs 0087 and 0088). Every decision is
 * catalog-core's (gateOf, takeTurn, probing, recordedBreaker, heldTransition, drainTurn),
 * taken inside the claim's or the record's IMMEDIATE transaction: the file's write lock orders
 * every claim and record of every catalog process on it, so replicas never disagree on a turn,
 * a probe or a breaker's state.
 */
export function createDeliveryControl(db: Database.Database): DeliveryControl {
  const base = controlBase(db);
  const { stmt, viewOf } = base;
  return {
    claim: (owner, now, claimMs, limit) => claimWith(base, owner, now, claimMs, limit),
    recording: (ref, endpointId, current, attempt, transition, now) => recordingWith(base, ref, endpointId, current, attempt, transition, now),
    settle: (endpointId, now) => settleWith(base, endpointId, now),
    breakers: (endpointIds) => (endpointIds.length === 0 ? [] : (stmt.breakersOf.all(JSON.stringify(endpointIds)) as Row[]).map((r) => viewOf(breakerRows.read(r)))),
    active: () => (stmt.active.all() as Row[]).map((r) => viewOf(breakerRows.read(r))),
    nextProbeAfter: (after) => (stmt.nextProbe.get(after) as number | null) ?? undefined,
  };
}
