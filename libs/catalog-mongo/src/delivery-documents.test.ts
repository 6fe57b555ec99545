import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { Query, updateMany, updateOne } from "mingo";
import { NEVER_FORWARDED, begunDelivery, claimedDelivery, isClaimable, recordedDelivery, type DeliveryProgress, type EventQuery, type AttemptRecord } from "@whc/catalog-core";
import { forwardAttemptFixture } from "@whc/catalog-core/testing";
import {
  CLAIM_ORDER,
  OUTBOX_FILTER,
  beginUpdate,
  claimFilter,
  claimUpdate,
  eventRefFilter,
  nextDueFilter,
  proxyAnswerUpdate,
  recordUpdate,
} from "./delivery-documents.js";
import { SUMMARY_PROJECTION, pageFilter, type Doc } from "./documents.js";
import { attemptToDoc, deliveryFromDoc, deliveryToDoc, forwardFromDoc, summaryDocs, type AnyDoc } from "./records.js";
import { DELIVERY_STATES } from "@whc/api-model";
import type { AttemptTransition } from "@whc/ports";

/*
 * The outbox's documents, evaluated by mingo against catalog-core's reference functions: the
 * same check endpoint-update.test.ts makes of endpoint patches.
 */

const REF = { accountId: "acct", endpointId: "ep", eventId: "ev" };

/** An event as stored: without `forward` when never forwarded. */
function eventDoc(p: DeliveryProgress, attempts: AttemptRecord[] = [], id = REF.eventId, receivedAt = 1000): AnyDoc {
  return {
    _id: id,
    endpointId: REF.endpointId,
    accountId: REF.accountId,
    receivedAt,
    ...(p.state === undefined ? {} : { forward: deliveryToDoc(p, attempts.map(attemptToDoc)) }),
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
function findOneAndUpdate(docs: Doc[], filter: Doc, update: Doc): Doc | undefined {
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
});

/** A stored delivery: never forwarded has no fields of its own. */
const stored = progress.map((p) => (p.state === undefined ? NEVER_FORWARDED : p));

const transition: fc.Arbitrary<AttemptTransition> = fc.oneof(
  fc.constant<AttemptTransition>({ kind: "direct" }),
  fc.record({
    kind: fc.constant("worker" as const),
    owner: fc.constantFrom("w1", "w2", "$w"),
    state: fc.constantFrom(...DELIVERY_STATES),
    nextAttemptAt: fc.option(fc.integer({ min: 0, max: 40 }), { nil: undefined }),
  }),
);

describe("MongoDB outbox documents, evaluated by mingo", () => {
  it("claims exactly what isClaimable says is claimable", () => {
    fc.assert(
      fc.property(stored, fc.integer({ min: 0, max: 25 }), (p, now) => {
        expect(new Query(claimFilter(now)).test(eventDoc(p)), JSON.stringify(p)).toBe(isClaimable(p, now));
      }),
      { numRuns: 500 },
    );
  });

  it("takes the next attempt number and the claim, like claimedDelivery", () => {
    fc.assert(
      fc.property(stored, fc.constantFrom("w1", "$w"), fc.integer({ min: 0, max: 25 }), fc.integer({ min: 1, max: 100 }), (p, owner, now, claimMs) => {
        fc.pre(isClaimable(p, now));
        const { doc } = applied(eventDoc(p), claimFilter(now), claimUpdate(owner, now, claimMs));
        expect(deliveryFromDoc(doc)).toEqual(claimedDelivery(p, owner, now, claimMs));
      }),
      { numRuns: 300 },
    );
  });

  it("never lets a delivery be claimed twice, also when two claims find it at once", () => {
    const due = (id: string, at: number) => eventDoc({ ...NEVER_FORWARDED, state: "pending", target: "t", nextAttemptAt: at }, [], id);
    const docs: Doc[] = [due("c", 5), due("a", 3), due("b", 3), due("later", 50)];
    const claimed = [1, 2, 3, 4].map(() => findOneAndUpdate(docs, claimFilter(10), claimUpdate("w1", 10, 30)));
    expect(claimed.map((d) => d?._id)).toEqual(["a", "b", "c", undefined]);
    expect(claimed.slice(0, 3).map((d) => (d!.forward as Doc).started)).toEqual([1, 1, 1]);

    // Two claimers saw the same due delivery; the server applies each update only where its
    // filter still matches, so the second changes nothing.
    const race: Doc[] = [due("x", 3)];
    const [seen] = new Query(claimFilter(10)).find<Doc>(race).all();
    expect(updateOne(race, { ...claimFilter(10), _id: seen!._id }, claimUpdate("w1", 10, 30) as never).modifiedCount).toBe(1);
    expect(updateOne(race, { ...claimFilter(10), _id: seen!._id }, claimUpdate("w2", 10, 30) as never).modifiedCount).toBe(0);
    expect(race[0]!.forward).toMatchObject({ claimOwner: "w1", started: 1, claimUntil: 40 });
    // Once the claim expired, the next claim takes the next number.
    expect(findOneAndUpdate(race, claimFilter(40), claimUpdate("w2", 40, 30))?.forward).toMatchObject({ claimOwner: "w2", started: 2 });
  });

  it("begins an attempt like begunDelivery, creating the record on a never-forwarded event", () => {
    fc.assert(
      fc.property(stored, fc.constantFrom("https://b.example.test/", "$target", "$$REMOVE"), (p, target) => {
        const { doc } = applied(eventDoc(p, [forwardAttemptFixture(1)]), eventRefFilter(REF), beginUpdate(target));
        expect(deliveryFromDoc(doc)).toEqual(begunDelivery(p, target));
      }),
      { numRuns: 300 },
    );
    const { doc } = applied(eventDoc(NEVER_FORWARDED), eventRefFilter(REF), beginUpdate("https://b.example.test/"));
    expect(forwardFromDoc(doc)).toEqual({ state: "pending", target: "https://b.example.test/", nextAttemptAt: undefined, attempts: [] });
  });

  it("records an attempt like recordedDelivery, keeping the first record of a number", () => {
    const attempt = fc.record({ n: fc.integer({ min: 1, max: 5 }), status: fc.constantFrom(0, 200, 204, 404, 500), url: fc.constantFrom("https://u.example.test/", "$url") });
    fc.assert(
      fc.property(stored, attempt, transition, fc.subarray([1, 2, 3]), (p, a, t, recorded) => {
        const before = recorded.map((n) => forwardAttemptFixture(n));
        const next = forwardAttemptFixture(a.n, { status: a.status, url: a.url, error: a.status ? "" : "timeout" });
        const { doc } = applied(eventDoc(p, p.state === undefined ? [] : before), eventRefFilter(REF), recordUpdate(next, t));
        const known = p.state !== undefined && recorded.includes(a.n);
        expect(deliveryFromDoc(doc), JSON.stringify({ p, a, t, recorded })).toEqual(known ? p : recordedDelivery(p, next, t));
        const attempts = [...(p.state === undefined ? [] : before), ...(known ? [] : [next])].sort((x, y) => x.n - y.n);
        expect(forwardFromDoc(doc)?.attempts).toEqual(attempts);
      }),
      { numRuns: 1000 },
    );
  });

  it("records a lost claim's attempt without moving the state", () => {
    const held: DeliveryProgress = { state: "pending", target: "t", nextAttemptAt: 5, claimOwner: "w2", claimUntil: 90, started: 2 };
    const { doc } = applied(eventDoc(held), eventRefFilter(REF), recordUpdate(forwardAttemptFixture(1), { kind: "worker", owner: "w1", state: "exhausted" }));
    expect(deliveryFromDoc(doc)).toEqual(held);
    expect(forwardFromDoc(doc)?.attempts.map((a) => a.n)).toEqual([1]);
    const won = applied(doc, eventRefFilter(REF), recordUpdate(forwardAttemptFixture(2, { status: 200 }), { kind: "worker", owner: "w2", state: "delivered" }));
    expect(deliveryFromDoc(won.doc)).toEqual({ ...held, state: "delivered", nextAttemptAt: undefined, claimOwner: undefined, claimUntil: undefined });
    // Released and out of the outbox: the fields are null, as claimFilter and OUTBOX_FILTER expect.
    expect(won.doc.forward).toMatchObject({ claimOwner: null, claimUntil: null, nextAttemptAt: null });
    expect(new Query(OUTBOX_FILTER).test(won.doc)).toBe(false);
  });

  it("changes nothing of an event of another account or endpoint", () => {
    const doc = eventDoc({ ...NEVER_FORWARDED, state: "pending", target: "t", nextAttemptAt: 1 });
    for (const ref of [{ ...REF, accountId: "other" }, { ...REF, endpointId: "other" }]) {
      expect(applied(doc, eventRefFilter(ref), beginUpdate("t")).modified).toBe(0);
      expect(applied(doc, eventRefFilter(ref), recordUpdate(forwardAttemptFixture(1), { kind: "direct" })).modified).toBe(0);
    }
  });

  it("keeps sealed attempt bodies, headers in order and errors through a record", () => {
    const attempt = forwardAttemptFixture(1, { headers: [["X-B", "2"], ["x-a", "1"], ["X-B", "1"]], bodyTruncated: true });
    const bare = forwardAttemptFixture(2, { body: undefined, status: 0, error: "connection_refused" });
    let doc = eventDoc(NEVER_FORWARDED);
    for (const a of [attempt, bare]) doc = applied(doc, eventRefFilter(REF), recordUpdate(a, { kind: "direct" })).doc;
    expect(forwardFromDoc(doc)?.attempts).toEqual([attempt, bare]);
    expect((doc.forward as Doc).attempts).toEqual([attemptToDoc(attempt), attemptToDoc(bare)]);
  });
});

describe("MongoDB forward lists and the outbox count, evaluated by mingo", () => {
  const at = (state: DeliveryProgress["state"], nextAttemptAt?: number): DeliveryProgress => ({ ...NEVER_FORWARDED, state, target: "t", nextAttemptAt });
  const docs = [
    eventDoc(NEVER_FORWARDED, [], "e0", 1),
    eventDoc(at("pending", 5), [forwardAttemptFixture(1)], "e1", 2),
    eventDoc(at("pending"), [], "e2", 3),
    eventDoc(at("delivered"), [forwardAttemptFixture(1, { status: 200 })], "e3", 4),
    eventDoc(at("failed"), [], "e4", 5),
    eventDoc(at("exhausted"), [], "e5", 6),
    eventDoc(at("pending", 2), [], "e6", 7),
  ];
  const q = (forwardState: string): EventQuery => ({ accountId: "acct", endpointId: "ep", limit: 50, forwardState });
  const ids = (filter: Doc) => new Query(filter).find<Doc>(docs).all().map((d) => d._id);

  it("filters by forward state, none for events never forwarded", () => {
    expect(ids(pageFilter(q("none")))).toEqual(["e0"]);
    expect(ids(pageFilter(q("pending")))).toEqual(["e1", "e2", "e6"]);
    for (const [state, id] of [["delivered", "e3"], ["failed", "e4"], ["exhausted", "e5"]]) expect(ids(pageFilter(q(state!)))).toEqual([id]);
  });

  it("counts only deliveries waiting in the outbox, oldest due first", () => {
    expect(new Query(OUTBOX_FILTER).find<Doc>(docs).sort(CLAIM_ORDER).all().map((d) => d._id)).toEqual(["e6", "e1"]);
  });

  it("finds the next due after a time among the outbox's deliveries only", () => {
    const next = (after: number) => new Query(nextDueFilter(after)).find<Doc>(docs).sort(CLAIM_ORDER).all().map((d) => d._id);
    expect(next(1)).toEqual(["e6", "e1"]);
    expect(next(2)).toEqual(["e1"]);
    expect(next(5)).toEqual([]);
  });

  it("lists the state without the attempts", () => {
    const listed = new Query({}).find<AnyDoc>(docs, SUMMARY_PROJECTION).all();
    expect(listed.map((d) => summaryDocs.read(d).forwardState)).toEqual([undefined, "pending", "pending", "delivered", "failed", "exhausted", "pending"]);
    for (const d of listed) expect(d.forward ?? {}).not.toHaveProperty("attempts");
  });
});

describe("a proxied capture's answer", () => {
  const stored = () => ({
    ...eventDoc({ state: undefined } as unknown as DeliveryProgress),
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
