import type { Collection } from "mongodb";
import {
  breakerOutcomeOf,
  claimHolds,
  createControlCache,
  gateOf,
  heldTransition,
  holdsDeliveries,
  isClaimable,
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
  type ClaimOutcome,
  type DeliveryClaim,
  type DestinationControl,
} from "@whc/catalog-core";
import type { AttemptTransition, DeliveryRef } from "@whc/ports";
import type { CatalogCollections } from "./connection.js";
import { CLAIM_ORDER, eventRefFilter } from "./delivery-documents.js";
import {
  ACTIVE_FILTER,
  HELD_ORDER,
  RELEASABLE_FILTER,
  breakerFromDoc,
  breakerToDoc,
  candidatesFilter,
  claimOneUpdate,
  claimableOneFilter,
  heldFilter,
  heldOneFilter,
  holdOneUpdate,
  holdWaitingUpdate,
  liveTokens,
  moveOneUpdate,
  nextProbeFilter,
  probeOneUpdate,
  probesDueFilter,
  releaseOneUpdate,
  waitingFilter,
  type BreakerDoc,
} from "./control-documents.js";
import { deliveryFromDoc, type AnyDoc } from "./records.js";

/** A breaker as read, with the version a compare-and-set needs (0: none stored yet). */
interface Versioned {
  b: BreakerRecord;
  tokens: BreakerDoc["inFlight"];
  v: number;
}

/** How many times a decision is taken again after another catalog process changed the breaker first. */
const CAS_TRIES = 8;

/** The collections and the small steps every decision shares. */
function controlBase({ events, endpoints, breakers }: ControlCollections) {
  const controlsOf = createControlCache();

  async function controlOf(endpointId: string, destinationId: string): Promise<DestinationControl | undefined> {
    const e = await endpoints.findOne({ _id: endpointId }, { projection: { accountId: 1, forwardJson: 1 } });
    return e ? controlsOf({ id: e._id, accountId: e.accountId as string, forwardJson: (e.forwardJson as string | undefined) ?? "" }).get(destinationId) : undefined;
  }

  async function read(control: DestinationControl): Promise<Versioned> {
    const d = await breakers.findOne({ _id: control.destinationId });
    return d ? { b: breakerFromDoc(d), tokens: d.inFlight ?? [], v: d.v } : { b: newBreaker(control), tokens: [], v: 0 };
  }

  /** Writes `next` if nobody changed the breaker since `from` was read; false when someone did. */
  async function cas(from: Versioned, next: BreakerRecord, tokens = from.tokens): Promise<boolean> {
    const doc = breakerToDoc(next, tokens, from.v + 1);
    if (from.v === 0) {
      try {
        await breakers.insertOne(doc);
        return true;
      } catch (err) {
        if ((err as { code?: number }).code === 11000) return false;
        throw err;
      }
    }
    const { matchedCount } = await breakers.replaceOne({ _id: from.b.destinationId, v: from.v }, doc);
    return matchedCount === 1;
  }

  /** Applies `change` to the breaker, read again and retried until it sticks. */
  async function updateBreaker(control: DestinationControl, change: (v: Versioned) => { b: BreakerRecord; tokens?: BreakerDoc["inFlight"] } | undefined): Promise<BreakerRecord | undefined> {
    for (let i = 0; i < CAS_TRIES; i += 1) {
      const current = await read(control);
      const next = change(current);
      if (!next) return current.b;
      if (await cas(current, next.b, next.tokens ?? current.tokens)) return next.b;
    }
    return undefined;
  }

  async function heldCount(destinationId: string): Promise<number> {
    return events.countDocuments(heldFilter(destinationId));
  }

  /** Lets every held delivery of a destination gone go at once (each then fails as not configured). */
  async function releaseAll(destinationId: string, now: number): Promise<void> {
    const held = await events.find(heldFilter(destinationId), { projection: { _id: 1 } }).toArray();
    for (const e of held) await events.updateOne(heldOneFilter(e._id, destinationId), releaseOneUpdate(destinationId, now));
  }

  async function deliveryStateOf(eventId: string, destinationId: string): Promise<string | undefined> {
    const doc = await events.findOne({ _id: eventId }, { projection: { "deliveries.destinationId": 1, "deliveries.state": 1 } });
    return ((doc?.deliveries ?? []) as AnyDoc[]).find((d) => d.destinationId === destinationId)?.state as string | undefined;
  }

  /**
   * The drain's step (drainsNext, drainTurn): once the delivery let through settled, the oldest
   * held one is let go at its turn, by the process whose compare-and-set names it; with none
   * left, the drain is over. A release that did not apply is made up by the next step.
   */
  async function drainStep(control: DestinationControl, destinationId: string, now: number): Promise<void> {
    for (let i = 0; i < CAS_TRIES; i += 1) {
      const v = await read(control);
      const current = v.b.probeEventId === undefined ? undefined : await deliveryStateOf(v.b.probeEventId, destinationId);
      if (!drainsNext(control, v.b, current)) return;
      const [next] = await events.find(heldFilter(destinationId), { projection: { _id: 1 } }).sort(HELD_ORDER).limit(1).toArray();
      if (!next) {
        if (await cas(v, drained(v.b))) return;
        continue;
      }
      const turn = drainTurn(v.b, control, next._id, now);
      if (!(await cas(v, turn.breaker))) continue;
      await events.updateOne(heldOneFilter(next._id, destinationId), releaseOneUpdate(destinationId, turn.at));
      return;
    }
  }

  /** Drains what no longer has to be held; forgets the breakers of destinations gone. */
  async function releaseSettled(rows: readonly BreakerRecord[], now: number): Promise<void> {
    for (const b of rows) {
      const control = await controlOf(b.endpointId, b.destinationId);
      if (!control) {
        await breakers.deleteOne({ _id: b.destinationId });
        await releaseAll(b.destinationId, now);
      } else {
        await drainStep(control, b.destinationId, now);
      }
    }
  }

  async function markHolding(control: DestinationControl): Promise<void> {
    await updateBreaker(control, ({ b }) => (b.holding ? undefined : { b: { ...b, holding: true } }));
  }

  function claimOf(doc: AnyDoc, destinationId: string): DeliveryClaim {
    const raw = ((doc.deliveries ?? []) as AnyDoc[]).find((x) => x.destinationId === destinationId);
    const p = deliveryFromDoc(raw);
    return {
      accountId: doc.accountId as string,
      endpointId: doc.endpointId as string,
      eventId: doc._id,
      destinationId,
      attempt: p.started,
      ...(p.spared > 0 ? { counted: p.started - p.spared } : {}),
      // A delivery a bulk redelivery put back: its attempts are the job's (ADR 0089).
      ...(typeof raw?.bulkJobId === "string" ? { bulkJobId: raw.bulkJobId, attemptBase: typeof raw.attemptBase === "number" ? raw.attemptBase : 0 } : {}),
    };
  }

  async function claimOne(doc: AnyDoc, destinationId: string, owner: string, now: number, claimMs: number, started: number, letThrough = false): Promise<DeliveryClaim | undefined> {
    const after = await events.findOneAndUpdate(claimableOneFilter(doc._id, destinationId, now, started), claimOneUpdate(destinationId, owner, now, claimMs, started, letThrough), {
      returnDocument: "after",
      projection: { accountId: 1, endpointId: 1, deliveries: 1 },
    });
    return after ? claimOf(after, destinationId) : undefined;
  }

  async function views(docs: BreakerDoc[]): Promise<BreakerView[]> {
    return Promise.all(docs.map(async (d) => ({ ...breakerFromDoc(d), held: d.holding ? await heldCount(d._id) : 0 })));
  }
  return { events, endpoints, breakers, controlsOf, controlOf, read, cas, updateBreaker, heldCount, drainStep, releaseSettled, markHolding, claimOf, claimOne, views };
}

type Base = ReturnType<typeof controlBase>;
type ControlCollections = Pick<CatalogCollections, "events" | "endpoints"> & { breakers: Collection<BreakerDoc> };

/** One held delivery per open breaker whose probe is due, claimed by the process that wins its compare-and-set. */
async function probes(base: Base, owner: string, now: number, claimMs: number, limit: number, claims: DeliveryClaim[]): Promise<void> {
  const { events, breakers, controlOf, releaseSettled, cas, claimOf } = base;
  for (const d of await breakers.find(probesDueFilter(now)).toArray()) {
    if (claims.length >= limit) return;
    const b = breakerFromDoc(d);
    const control = await controlOf(b.endpointId, b.destinationId);
    if (!control) {
      await releaseSettled([b], now);
      continue;
    }
    if (!probeDue(control, b, now)) continue;
    const [held] = await events.find(heldFilter(b.destinationId), { projection: { _id: 1 } }).sort(HELD_ORDER).limit(1).toArray();
    if (!held) continue;
    // One process wins the probe: the compare-and-set from the breaker it read.
    if (!(await cas({ b, tokens: d.inFlight ?? [], v: d.v }, probing(b, held._id, now, claimMs)))) continue;
    const after = await events.findOneAndUpdate(heldOneFilter(held._id, b.destinationId), probeOneUpdate(b.destinationId, owner, now, claimMs), {
      returnDocument: "after",
      projection: { accountId: 1, endpointId: 1, deliveries: 1 },
    });
    if (after) claims.push(claimOf(after, b.destinationId));
  }
}


async function claimWith(base: Base, owner: string, now: number, claimMs: number, limit: number): Promise<ClaimOutcome> {
  const { events, breakers, releaseSettled, claimOne, updateBreaker } = base;
  // Each endpoint's destinations read once per claim, however many of its deliveries are due.
  const endpoints = new Map<string, Promise<DestinationControl | undefined>>();
  const controlOf = (endpointId: string, destinationId: string) => {
    const key = `${endpointId} ${destinationId}`;
    if (!endpoints.has(key)) endpoints.set(key, base.controlOf(endpointId, destinationId));
    return endpoints.get(key)!;
  };
  await releaseSettled((await breakers.find(RELEASABLE_FILTER).toArray()).map(breakerFromDoc), now);
  const claims: DeliveryClaim[] = [];
  await probes(base, owner, now, claimMs, limit, claims);

  const busy = new Set<string>();
  const waiting = new Map<string, number>();
  let limiterWaits = 0;
  // Bounded: a page whose updates all lost to another process is read again, not forever.
  for (let page = 0; page < 20 && claims.length < limit; page += 1) {
    const docs = await events
      .find(candidatesFilter(now, [...busy]), { projection: { accountId: 1, endpointId: 1, deliveries: 1 } })
      .sort(CLAIM_ORDER)
      .limit(limit - claims.length)
      .toArray();
    if (docs.length === 0) break;
    for (const doc of docs) {
      for (const raw of (doc.deliveries ?? []) as AnyDoc[]) {
        if (claims.length >= limit) break;
        const destinationId = raw.destinationId as string;
        const p = deliveryFromDoc(raw);
        if (busy.has(destinationId) || !isClaimable(p, now)) continue;
        const control = await controlOf(doc.endpointId as string, destinationId);
        if (!control) {
          const c = await claimOne(doc, destinationId, owner, now, claimMs, p.started);
          if (c) claims.push(c);
          continue;
        }
        const outcome = await gated(base, control, doc, destinationId, p.started, owner, now, claimMs);
        if (outcome.kind === "claimed") claims.push(outcome.claim);
        else if (outcome.kind === "busy") busy.add(destinationId);
        else if (outcome.kind === "wait") {
          // The turn is the breaker's (queuedUntil): taken by compare-and-set, then the delivery moved to it.
          const taken: { at?: number } = {};
          const until = outcome.until;
          await updateBreaker(control, (v) => {
            const turn = waitingTurn(v.b, control, until, now);
            taken.at = turn.at;
            return { b: turn.breaker };
          });
          const at = taken.at;
          if (at === undefined) continue;
          const moved = await events.updateOne(claimableOneFilter(doc._id, destinationId, now, p.started), moveOneUpdate(destinationId, now, p.started, at));
          if (moved.modifiedCount > 0) limiterWaits += 1;
          const k = (waiting.get(destinationId) ?? 0) + 1;
          waiting.set(destinationId, k);
          if (k >= MAX_WAITS_PER_CLAIM) busy.add(destinationId);
        }
      }
    }
  }
  return { claims, limiterWaits };
}

type Gated = { kind: "claimed"; claim: DeliveryClaim } | { kind: "busy" } | { kind: "wait"; until: number } | { kind: "done" };

/** One due delivery of a controlled destination through its gate: held, busy, waiting, or claimed with the turn and slot it took. */
async function gated(
  base: Base,
  control: DestinationControl,
  doc: AnyDoc, destinationId: string, started: number, owner: string, now: number, claimMs: number): Promise<Gated> {
  const { events, read, cas, claimOne, markHolding, updateBreaker } = base;
  const limited = control.spacingMs !== undefined || control.concurrency !== undefined;
  for (let i = 0; i < CAS_TRIES; i += 1) {
    const current = await read(control);
    const tokens = liveTokens(current.tokens, now);
    const letThrough = isLetThrough(control, current.b, doc._id);
    const gate = gateOf(control, current.b, tokens.length, now, letThrough);
    if (gate.kind === "hold") {
      const held = await events.updateOne(claimableOneFilter(doc._id, destinationId, now, started), holdOneUpdate(destinationId, now, started));
      if (held.modifiedCount > 0) await markHolding(control);
      return { kind: "done" };
    }
    if (gate.kind === "busy") return { kind: "busy" };
    if (gate.kind === "wait") return { kind: "wait", until: gate.until };
    if (limited) {
      const taken = control.concurrency !== undefined ? [...tokens, { eventId: doc._id, until: now + claimMs }] : tokens;
      if (!(await cas(current, takeTurn(current.b, control, now), taken))) continue;
    }
    const c = await claimOne(doc, destinationId, owner, now, claimMs, started, letThrough);
    if (!c) {
      // Another process took it first: the slot goes back (the turn is spent).
      if (control.concurrency !== undefined) await updateBreaker(control, (v) => ({ b: v.b, tokens: v.tokens.filter((t) => t.eventId !== doc._id) }));
      return { kind: "done" };
    }
    const paced = sendAfterMsOf(control);
    return { kind: "claimed", claim: paced ? { ...c, sendAfterMs: paced } : c };
  }
  return { kind: "done" };
}


/**
 * Before an outbox attempt's record: the transition the store applies and what becomes of the
 * breaker (taken by compare-and-set); `after` runs once the delivery is written.
 */
async function recordingWith(base: Base, ref: DeliveryRef, attempt: AttemptRecord, transition: AttemptTransition, now: number) {
  const { events, controlOf, updateBreaker, drainStep, heldCount, read } = base;
  const plain = { transition, after: async () => undefined as BreakerNotice | undefined };
  if (transition.kind !== "worker") return plain;
  const doc = await events.findOne(eventRefFilter(ref), { projection: { "deliveries.destinationId": 1, "deliveries.state": 1, "deliveries.claimOwner": 1, "deliveries.started": 1, "deliveries.attempts.n": 1 } });
  const raw = ((doc?.deliveries ?? []) as AnyDoc[]).find((x) => x.destinationId === ref.destinationId);
  const known = ((raw?.attempts ?? []) as { n: number }[]).some((a) => a.n === attempt.n);
  if (!raw || known || !claimHolds(deliveryFromDoc(raw), transition.owner, attempt.n)) return plain;
  const control = await controlOf(ref.endpointId, ref.destinationId);
  if (!control) return plain;
  const outcome = breakerOutcomeOf(attempt);
  let change: ReturnType<typeof recordedBreaker> | undefined;
  const settled = await updateBreaker(control, (v) => {
    change = recordedBreaker(v.b, control, outcome, v.b.state === "half_open" && v.b.probeEventId === ref.eventId, now);
    const heldNow = heldTransition(transition, holdsDeliveries(control, change.breaker), outcome) !== transition;
    let b = change.breaker;
    if (heldNow || change.opened) b = { ...b, holding: true };
    // Its concurrency slot is free again, whatever the verdict.
    return { b, tokens: v.tokens.filter((t) => t.eventId !== ref.eventId) };
  });
  if (!settled || !change) return plain;
  const made = change;
  const applied = heldTransition(transition, holdsDeliveries(control, made.breaker), outcome);
  return {
    transition: applied,
    after: async (): Promise<BreakerNotice | undefined> => {
      if (made.opened) await events.updateMany(waitingFilter(ref.destinationId, now), holdWaitingUpdate(ref.destinationId, now));
      // Closed by this attempt, or the drain's current delivery settled: the drain goes on.
      await drainStep(control, ref.destinationId, now);
      if (!made.opened && !made.closed) return undefined;
      const b = (await read(control)).b;
      return { change: made.opened ? "opened" : "closed", name: control.name, breaker: { ...b, held: await heldCount(ref.destinationId) } };
    },
  };
}


async function settleWith(base: Base, endpointId: string, now: number): Promise<void> {
  const { events, endpoints, breakers, controlsOf, releaseSettled, markHolding, drainStep } = base;
  const e = await endpoints.findOne({ _id: endpointId }, { projection: { accountId: 1, forwardJson: 1 } });
  const controls = e ? controlsOf({ id: e._id, accountId: e.accountId as string, forwardJson: (e.forwardJson as string | undefined) ?? "" }) : new Map<string, DestinationControl>();
  const stored = (await breakers.find({ endpointId }).toArray()).map(breakerFromDoc);
  await releaseSettled(
    stored.filter((b) => !controls.has(b.destinationId)),
    now,
  );
  for (const control of controls.values()) {
    if (control.paused) {
      const held = await events.updateMany(waitingFilter(control.destinationId, now), holdWaitingUpdate(control.destinationId, now));
      if (held.modifiedCount > 0) await markHolding(control);
    } else {
      const b = stored.find((x) => x.destinationId === control.destinationId);
      if (b?.holding && b.state === "closed") await drainStep(control, control.destinationId, now);
    }
  }
}


/**
 * Delivery control on MongoDB (design §18; ADRs 0087, 0088): catalog-core's decisions, each
 * made atomic by a compare-and-set of the destination's breaker document and a conditional
 * update of the one delivery it concerns. A decision whose breaker changed meanwhile is taken
 * again; a delivery update that no longer applies (another process got there first) is
 * skipped. A delivery left pending while its destination holds (a record raced an opening) is
 * held by the next claim that meets it: the gate, not the record, is what keeps anything from
 * being sent.
 */
export function createMongoDeliveryControl(collections: ControlCollections) {
  const base = controlBase(collections);
  const { breakers, views } = base;
  return {
    claim: (owner: string, now: number, claimMs: number, limit: number) => claimWith(base, owner, now, claimMs, limit),
    recording: (ref: DeliveryRef, attempt: AttemptRecord, transition: AttemptTransition, now: number) => recordingWith(base, ref, attempt, transition, now),
    settle: (endpointId: string, now: number) => settleWith(base, endpointId, now),
    breakers: async (endpointIds: readonly string[]) => (endpointIds.length === 0 ? [] : views(await breakers.find({ endpointId: { $in: [...endpointIds] } }).toArray())),
    active: async () => views(await breakers.find(ACTIVE_FILTER).toArray()),
    nextProbeAfter: async (after: number) => (await breakers.find(nextProbeFilter(after)).sort({ nextProbeAt: 1 }).limit(1).next())?.nextProbeAt ?? undefined,
  };
}
