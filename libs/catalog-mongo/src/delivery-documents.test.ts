import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { Aggregator, Query, updateMany, updateOne } from "mingo";
import {
  NEVER_FORWARDED,
  aggregateOf,
  begunDelivery,
  claimableAt,
  claimedDelivery,
  isClaimable,
  recordedDelivery,
  type DeliveryProgress,
  type EventQuery,
  type AttemptRecord,
} from "@whc/catalog-core";
import { forwardAttemptFixture } from "@whc/catalog-core/testing";
import {
  CLAIM_ORDER,
  LEGACY_FILTER,
  LEGACY_MOVE,
  OUTBOX_FILTER,
  OUTBOX_STATS_PIPELINE,
  beginUpdate,
  claimFilter,
  claimUpdate,
  eventRefFilter,
  nextDueFilter,
  proxyAnswerUpdate,
  recordUpdate,
} from "./delivery-documents.js";
import { SUMMARY_PROJECTION, pageFilter, type Doc } from "./documents.js";
import { attemptToDoc, deliveriesFromDoc, deliveryOfDoc, deliveryToDoc, summaryDocs, type AnyDoc } from "./records.js";
import { DELIVERY_STATES, type DeliveryState } from "@whc/api-model";
import type { AttemptTransition } from "@whc/ports";

/*
 * The outbox's documents, evaluated by mingo against catalog-core's reference functions: the
 * same check endpoint-update.test.ts makes of endpoint patches. An event holds one delivery per
 * destination (design §17), and each update moves one of them with the event's aggregate.
 */

const REF = { accountId: "acct", endpointId: "ep", eventId: "ev" };
const DESTINATIONS = ["d-a", "d-b", "d-c"] as const;
const to = (destinationId: string) => ({ ...REF, destinationId });

type Deliveries = [destinationId: string, p: DeliveryProgress, attempts?: AttemptRecord[]][];

/** The event's summary fields as every update leaves them: the aggregate and the outbox time. */
function summaryOf(deliveries: Deliveries): Doc {
  const times = deliveries.map(([, p]) => claimableAt(p)).filter((t): t is number => t !== undefined);
  return { forwardState: aggregateOf(deliveries.map(([, p]) => p)) ?? null, outboxAt: times.length > 0 ? Math.min(...times) : null };
}

/** An event as stored: without `deliveries` when never forwarded. */
function eventDoc(deliveries: Deliveries, id = REF.eventId, receivedAt = 1000): AnyDoc {
  const stored = deliveries.filter(([, p]) => p.state !== undefined);
  return {
    _id: id,
    endpointId: REF.endpointId,
    accountId: REF.accountId,
    receivedAt,
    ...(stored.length === 0 ? {} : { deliveries: stored.map(([d, p, attempts = []]) => deliveryToDoc(d, p, attempts.map(attemptToDoc))), ...summaryOf(stored) }),
  };
}

/** A deep copy that keeps class instances (Binary) as they are. */
function copy<T>(value: T): T {
  if (Array.isArray(value)) return value.map(copy) as T;
  if (value && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, copy(v)])) as T;
  }
  return value;
}

/** The update applied by mingo to a copy of `doc` (filtered as the adapter filters), read back. */
function applied(doc: AnyDoc, filter: Doc, update: Doc | Doc[]): { doc: AnyDoc; modified: number } {
  const docs: Doc[] = [copy(doc)];
  const { modifiedCount } = updateMany(docs, filter, update as never);
  return { doc: docs[0] as AnyDoc, modified: modifiedCount };
}

/** findOneAndUpdate as the server runs it: the first match in order, updated atomically. */
function findOneAndUpdate(docs: Doc[], filter: Doc, update: Doc | Doc[]): Doc | undefined {
  const [candidate] = new Query(filter).find<Doc>(docs).sort(CLAIM_ORDER).limit(1).all();
  if (!candidate) return undefined;
  updateOne(docs, { ...filter, _id: candidate._id }, update as never);
  return docs.find((d) => d._id === candidate._id);
}

const progress: fc.Arbitrary<DeliveryProgress> = fc.record({
  state: fc.constantFrom(undefined, ...DELIVERY_STATES),
  target: fc.constantFrom("https://a.example.test/", "$target"),
  nextAttemptAt: fc.option(fc.integer({ min: 0, max: 20 }), { nil: undefined }),
  claimOwner: fc.option(fc.constantFrom("w1", "w2", "$w"), { nil: undefined }),
  claimUntil: fc.option(fc.integer({ min: 0, max: 20 }), { nil: undefined }),
  started: fc.integer({ min: 0, max: 4 }),
  spared: fc.integer({ min: 0, max: 2 }),
});

/** A stored delivery: never forwarded has no fields of its own. */
const stored = progress.map((p) => (p.state === undefined ? NEVER_FORWARDED : p));

/** An event's deliveries: up to three destinations, each stored or absent. */
const deliveries: fc.Arbitrary<Deliveries> = fc.tuple(stored, stored, stored).map((ps) => DESTINATIONS.map((d, i): [string, DeliveryProgress] => [d, ps[i]!]));

const transition: fc.Arbitrary<AttemptTransition> = fc.oneof(
  fc.constant<AttemptTransition>({ kind: "direct" }),
  fc.record({
    kind: fc.constant("worker" as const),
    owner: fc.constantFrom("w1", "w2", "$w"),
    state: fc.constantFrom(...DELIVERY_STATES),
    nextAttemptAt: fc.option(fc.integer({ min: 0, max: 40 }), { nil: undefined }),
  }),
);

/** Every delivery of a document but one, as stored: what an update of that one must leave as it was. */
const othersOf = (doc: AnyDoc, destinationId: string) => deliveriesFromDoc(doc).filter((d) => d.destinationId !== destinationId);

describe("MongoDB outbox documents, evaluated by mingo", () => {
  it("finds an event to claim exactly when isClaimable says one of its deliveries is", () => {
    fc.assert(
      fc.property(deliveries, fc.integer({ min: 0, max: 25 }), (ds, now) => {
        const claimable = ds.some(([, p]) => p.state !== undefined && isClaimable(p, now));
        expect(new Query(claimFilter(now)).test(eventDoc(ds)), JSON.stringify(ds)).toBe(claimable);
      }),
      { numRuns: 500 },
    );
  });

  it("claims the first claimable delivery like claimedDelivery, and says which, leaving the others", () => {
    fc.assert(
      fc.property(deliveries, fc.constantFrom("w1", "$w"), fc.integer({ min: 0, max: 25 }), fc.integer({ min: 1, max: 100 }), (ds, owner, now, claimMs) => {
        const live = ds.filter(([, p]) => p.state !== undefined);
        const first = live.find(([, p]) => isClaimable(p, now));
        fc.pre(first !== undefined);
        const [destinationId, p] = first!;
        const { doc } = applied(eventDoc(ds), claimFilter(now), claimUpdate(owner, now, claimMs));
        const claimed = claimedDelivery(p, owner, now, claimMs);
        expect(deliveryOfDoc(doc, destinationId)).toEqual(claimed);
        expect(doc.lastClaim).toEqual({ destinationId, attempt: claimed.started });
        expect(othersOf(doc, destinationId)).toEqual(othersOf(eventDoc(ds), destinationId));
        const after = live.map(([d, q]): [string, DeliveryProgress] => [d, d === destinationId ? claimed : q]);
        expect({ forwardState: doc.forwardState, outboxAt: doc.outboxAt }).toEqual(summaryOf(after));
      }),
      { numRuns: 400 },
    );
  });

  it("never lets a delivery be claimed twice, also when two claims find it at once; an event's deliveries one by one", () => {
    const due = (id: string, at: number, ...destinations: string[]) =>
      eventDoc(
        destinations.map((d): [string, DeliveryProgress] => [d, { ...NEVER_FORWARDED, state: "pending", target: "t", nextAttemptAt: at }]),
        id,
      );
    const docs: Doc[] = [due("c", 5, "d-a"), due("a", 3, "d-a", "d-b"), due("b", 4, "d-a"), due("later", 50, "d-a")];
    const claimed = [1, 2, 3, 4, 5].map(() => {
      const d = findOneAndUpdate(docs, claimFilter(10), claimUpdate("w1", 10, 30));
      return d && `${d._id as string}/${(d.lastClaim as Doc).destinationId as string}#${(d.lastClaim as Doc).attempt as number}`;
    });
    expect(claimed).toEqual(["a/d-a#1", "a/d-b#1", "b/d-a#1", "c/d-a#1", undefined]);

    // Two claimers saw the same due delivery; the server applies each update only where its
    // filter still matches, so the second changes nothing.
    const race: Doc[] = [due("x", 3, "d-a")];
    const [seen] = new Query(claimFilter(10)).find<Doc>(race).all();
    expect(updateOne(race, { ...claimFilter(10), _id: seen!._id }, claimUpdate("w1", 10, 30) as never).modifiedCount).toBe(1);
    expect(updateOne(race, { ...claimFilter(10), _id: seen!._id }, claimUpdate("w2", 10, 30) as never).modifiedCount).toBe(0);
    expect(deliveryOfDoc(race[0] as AnyDoc, "d-a")).toMatchObject({ claimOwner: "w1", started: 1, claimUntil: 40 });
    // Once the claim expired, the next claim takes the next number.
    expect(deliveryOfDoc(findOneAndUpdate(race, claimFilter(40), claimUpdate("w2", 40, 30)) as AnyDoc, "d-a")).toMatchObject({ claimOwner: "w2", started: 2 });
  });

  it("begins an attempt like begunDelivery, creating the delivery when the event has none to that destination", () => {
    fc.assert(
      fc.property(deliveries, fc.constantFrom(...DESTINATIONS), fc.constantFrom("https://b.example.test/", "$target", "$$REMOVE"), (ds, destinationId, target) => {
        const before = eventDoc(ds.map(([d, p]) => [d, p, [forwardAttemptFixture(1)]]));
        const { doc } = applied(before, eventRefFilter(REF), beginUpdate(to(destinationId), target));
        const p = ds.find(([d]) => d === destinationId)![1];
        const begun = begunDelivery(p, target);
        expect(deliveryOfDoc(doc, destinationId)).toEqual(begun);
        expect(othersOf(doc, destinationId)).toEqual(othersOf(before, destinationId));
        const after = ds.map(([d, q]): [string, DeliveryProgress] => [d, d === destinationId ? begun : q]).filter(([, q]) => q.state !== undefined);
        expect({ forwardState: doc.forwardState, outboxAt: doc.outboxAt }).toEqual(summaryOf(after));
      }),
      { numRuns: 300 },
    );
    const { doc } = applied(eventDoc([]), eventRefFilter(REF), beginUpdate(to("d-b"), "https://b.example.test/"));
    expect(deliveriesFromDoc(doc)).toEqual([{ destinationId: "d-b", state: "pending", target: "https://b.example.test/", nextAttemptAt: undefined, attempts: [] }]);
  });

  it("records an attempt like recordedDelivery, keeping the first record of a number, moving the aggregate", () => {
    const attempt = fc.record({ n: fc.integer({ min: 1, max: 5 }), status: fc.constantFrom(0, 200, 204, 404, 500), url: fc.constantFrom("https://u.example.test/", "$url") });
    fc.assert(
      fc.property(deliveries, fc.constantFrom(...DESTINATIONS), attempt, transition, fc.subarray([1, 2, 3]), (ds, destinationId, a, t, recorded) => {
        const beforeAttempts = recorded.map((n) => forwardAttemptFixture(n));
        const before = eventDoc(ds.map(([d, p]) => [d, p, beforeAttempts]));
        const next = forwardAttemptFixture(a.n, { status: a.status, url: a.url, error: a.status ? "" : "timeout", requestSha256: a.status ? "ab".repeat(32) : "" });
        const { doc } = applied(before, eventRefFilter(REF), recordUpdate(to(destinationId), next, t));
        const p = ds.find(([d]) => d === destinationId)![1];
        const known = p.state !== undefined && recorded.includes(a.n);
        const after = known ? p : recordedDelivery(p, next, t);
        expect(deliveryOfDoc(doc, destinationId), JSON.stringify({ p, a, t, recorded })).toEqual(after);
        const attempts = [...(p.state === undefined ? [] : beforeAttempts), ...(known ? [] : [next])].sort((x, y) => x.n - y.n);
        expect(deliveriesFromDoc(doc).find((d) => d.destinationId === destinationId)?.attempts).toEqual(attempts);
        expect(othersOf(doc, destinationId)).toEqual(othersOf(before, destinationId));
        const all = ds.map(([d, q]): [string, DeliveryProgress] => [d, d === destinationId ? after : q]).filter(([, q]) => q.state !== undefined);
        expect({ forwardState: doc.forwardState, outboxAt: doc.outboxAt }).toEqual(summaryOf(all));
      }),
      { numRuns: 1000 },
    );
  });

  it("records a lost claim's attempt without moving the state", () => {
    const held: DeliveryProgress = { state: "pending", target: "t", nextAttemptAt: 5, claimOwner: "w2", claimUntil: 90, started: 2, spared: 0 };
    const { doc } = applied(eventDoc([["d-a", held]]), eventRefFilter(REF), recordUpdate(to("d-a"), forwardAttemptFixture(1), { kind: "worker", owner: "w1", state: "exhausted" }));
    expect(deliveryOfDoc(doc, "d-a")).toEqual(held);
    expect(deliveriesFromDoc(doc)[0]?.attempts.map((a) => a.n)).toEqual([1]);
    const won = applied(doc, eventRefFilter(REF), recordUpdate(to("d-a"), forwardAttemptFixture(2, { status: 200 }), { kind: "worker", owner: "w2", state: "delivered" }));
    expect(deliveryOfDoc(won.doc, "d-a")).toEqual({ ...held, state: "delivered", nextAttemptAt: undefined, claimOwner: undefined, claimUntil: undefined });
    // Released and out of the outbox: the fields are null, as the outbox's expressions expect.
    expect((won.doc.deliveries as Doc[])[0]).toMatchObject({ claimOwner: null, claimUntil: null, nextAttemptAt: null });
    expect(won.doc).toMatchObject({ forwardState: "delivered", outboxAt: null });
    expect(new Query(OUTBOX_FILTER).test(won.doc)).toBe(false);
  });

  it("changes nothing of an event of another account or endpoint", () => {
    const doc = eventDoc([["d-a", { ...NEVER_FORWARDED, state: "pending", target: "t", nextAttemptAt: 1 }]]);
    for (const ref of [{ ...REF, accountId: "other" }, { ...REF, endpointId: "other" }]) {
      expect(applied(doc, eventRefFilter(ref), beginUpdate(to("d-a"), "t")).modified).toBe(0);
      expect(applied(doc, eventRefFilter(ref), recordUpdate(to("d-a"), forwardAttemptFixture(1), { kind: "direct" })).modified).toBe(0);
    }
  });

  it("keeps sealed attempt bodies, headers in order, errors, digests and messages through a record", () => {
    const attempt = forwardAttemptFixture(1, { headers: [["X-B", "2"], ["x-a", "1"], ["X-B", "1"]], bodyTruncated: true, requestSha256: "0f".repeat(32) });
    const bare = forwardAttemptFixture(2, { body: undefined, status: 0, error: "transform_failed", message: "TypeError: boom" });
    let doc = eventDoc([]);
    for (const a of [attempt, bare]) doc = applied(doc, eventRefFilter(REF), recordUpdate(to("d-a"), a, { kind: "direct" })).doc;
    expect(deliveriesFromDoc(doc)[0]?.attempts).toEqual([attempt, bare]);
    expect((doc.deliveries as Doc[])[0]!.attempts).toEqual([attemptToDoc(attempt), attemptToDoc(bare)]);
  });

  it("moves an event stored with one `forward` to a delivery under its endpoint's id, once", () => {
    fc.assert(
      // Before destinations nothing was held: no attempt was spared.
      fc.property(stored.map((p) => ({ ...p, spared: 0 })), fc.subarray([1, 2]), (p, recorded) => {
        fc.pre(p.state !== undefined);
        const attempts = recorded.map((n) => forwardAttemptFixture(n));
        const { deliveries: _d, forwardState: _f, outboxAt: _o, ...bare } = eventDoc([]);
        const legacy: AnyDoc = { ...bare, forward: { ...deliveryToDoc("unused", p, attempts.map(attemptToDoc)), destinationId: undefined } };
        delete (legacy.forward as Doc).destinationId;
        const { doc, modified } = applied(legacy, LEGACY_FILTER, LEGACY_MOVE);
        expect(modified).toBe(1);
        expect(doc).not.toHaveProperty("forward");
        expect(deliveriesFromDoc(doc)).toEqual([{ destinationId: REF.endpointId, state: p.state, target: p.target, nextAttemptAt: p.nextAttemptAt, attempts }]);
        expect(deliveryOfDoc(doc, REF.endpointId)).toEqual(p);
        expect({ forwardState: doc.forwardState, outboxAt: doc.outboxAt }).toEqual(summaryOf([[REF.endpointId, p]]));
        expect(applied(doc, LEGACY_FILTER, LEGACY_MOVE).modified).toBe(0);
      }),
      { numRuns: 200 },
    );
  });
});

describe("MongoDB forward lists and the outbox count, evaluated by mingo", () => {
  const at = (state: DeliveryState, nextAttemptAt?: number): DeliveryProgress => ({ ...NEVER_FORWARDED, state, target: "t", nextAttemptAt });
  const docs = [
    eventDoc([], "e0", 1),
    eventDoc([["d-a", at("pending", 5), [forwardAttemptFixture(1)]]], "e1", 2),
    eventDoc([["d-a", at("pending")]], "e2", 3),
    eventDoc([["d-a", at("delivered"), [forwardAttemptFixture(1, { status: 200 })]], ["d-b", at("skipped")]], "e3", 4),
    eventDoc([["d-b", at("failed")], ["d-a", at("delivered")]], "e4", 5),
    eventDoc([["d-c", at("exhausted")]], "e5", 6),
    eventDoc([["d-b", at("pending", 2)], ["d-c", at("pending", 9)], ["d-a", at("failed")]], "e6", 7),
  ];
  const q = (extra: Partial<EventQuery>): EventQuery => ({ accountId: "acct", endpointId: "ep", limit: 50, ...extra });
  const ids = (filter: Doc) => new Query(filter).find<Doc>(docs).all().map((d) => d._id);

  it("filters by the aggregate forward state, none for events never forwarded", () => {
    expect(ids(pageFilter(q({ forwardState: "none" })))).toEqual(["e0"]);
    expect(ids(pageFilter(q({ forwardState: "pending" })))).toEqual(["e1", "e2", "e6"]);
    for (const [state, id] of [["delivered", "e3"], ["failed", "e4"], ["exhausted", "e5"]]) expect(ids(pageFilter(q({ forwardState: state! })))).toEqual([id]);
  });

  it("filters by destination, whatever the delivery's state", () => {
    expect(ids(pageFilter(q({ destinationId: "d-b" })))).toEqual(["e3", "e4", "e6"]);
    expect(ids(pageFilter(q({ destinationId: "d-c", forwardState: "pending" })))).toEqual(["e6"]);
    expect(ids(pageFilter(q({ destinationId: "d-x" })))).toEqual([]);
  });

  it("counts the deliveries waiting in the outbox and the oldest due, over events in claimable order", () => {
    expect(new Query(OUTBOX_FILTER).find<Doc>(docs).sort(CLAIM_ORDER).all().map((d) => d._id)).toEqual(["e6", "e1"]);
    expect(new Aggregator(OUTBOX_STATS_PIPELINE).run(docs)).toEqual([{ _id: null, pending: 3, oldest: 2 }]);
    expect(new Aggregator(OUTBOX_STATS_PIPELINE).run([docs[0]!, docs[3]!])).toEqual([]);
  });

  it("finds when a delivery can next be claimed after a time", () => {
    const next = (after: number) => new Query(nextDueFilter(after)).find<Doc>(docs).sort(CLAIM_ORDER).all().map((d) => d.outboxAt);
    expect(next(1)).toEqual([2, 5]);
    expect(next(2)).toEqual([5]);
    expect(next(5)).toEqual([]);
  });

  it("lists the aggregate state without the deliveries", () => {
    const listed = new Query({}).find<AnyDoc>(docs, SUMMARY_PROJECTION).all();
    expect(listed.map((d) => summaryDocs.read(d).forwardState)).toEqual([undefined, "pending", "pending", "delivered", "failed", "exhausted", "pending"]);
    for (const d of listed) expect(d).not.toHaveProperty("deliveries");
  });
});

describe("a proxied capture's answer", () => {
  const stored = () => ({
    ...eventDoc([]),
    responseCode: 0,
    diagnosticJson: JSON.stringify({ bodySha256: "ab", note: '"responseSource":"proxy" in a string', responseSource: "proxy" }),
  });

  it("stores the status the sender got and keeps the source when the forward answered", () => {
    const { doc, modified } = applied(stored(), eventRefFilter(REF), proxyAnswerUpdate(201, false));
    expect(modified).toBe(1);
    expect(doc.responseCode).toBe(201);
    expect(JSON.parse(doc.diagnosticJson as string).responseSource).toBe("proxy");
  });

  it("makes the source forward_failed when the sender got 502/504, touching nothing else", () => {
    const { doc } = applied(stored(), eventRefFilter(REF), proxyAnswerUpdate(504, true));
    expect(doc.responseCode).toBe(504);
    const diagnostic = JSON.parse(doc.diagnosticJson as string);
    expect(diagnostic.responseSource).toBe("forward_failed");
    expect(diagnostic.note).toBe('"responseSource":"proxy" in a string');
  });

  it("changes no other event", () => {
    const other = { ...stored(), _id: "another" };
    expect(applied(other, eventRefFilter(REF), proxyAnswerUpdate(200, true)).modified).toBe(0);
  });
});
