import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { Aggregator, Query, updateMany } from "mingo";
import {
  NEVER_FORWARDED,
  aggregateOf,
  claimableAt,
  endedOutcome,
  isClaimableJob,
  newRedeliveryJob,
  recordedDelivery,
  redoes,
  requeuedDelivery,
  type DeliveryProgress,
  type RedeliveryFilter,
  type RedeliveryJobRecord,
} from "@whc/catalog-core";
import { forwardAttemptFixture } from "@whc/catalog-core/testing";
import { DELIVERY_STATES } from "@whc/api-model";
import type { AttemptTransition } from "@whc/ports";
import { eventRefFilter, recordUpdate } from "./delivery-documents.js";
import type { Doc } from "./documents.js";
import { deliveryOfDoc, deliveryToDoc, redeliveryJobDocs, type AnyDoc } from "./records.js";
import {
  CLAIM_JOB_ORDER,
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

/*
 * Bulk redelivery's documents (ADR 0089), evaluated by mingo against catalog-core's reference
 * functions, as delivery-documents.test.ts does for the outbox: what a count and a page select,
 * what a page's update makes of each delivery, what a record tells the job, and the claims.
 */

const DESTINATIONS = ["d-a", "d-b", "d-c"] as const;
const JOB = "job-1";

/** A delivery with the job's tag or another's, as stored. */
interface Tagged {
  p: DeliveryProgress;
  bulkJobId?: string | undefined;
}

type EventSpec = { id: string; receivedAt: number; type: string; deliveries: [string, Tagged][] };

function eventDoc(e: EventSpec): AnyDoc {
  const stored = e.deliveries.filter(([, d]) => d.p.state !== undefined);
  const times = stored.map(([, d]) => claimableAt(d.p)).filter((t): t is number => t !== undefined);
  return {
    _id: e.id,
    accountId: "acct",
    endpointId: "ep",
    receivedAt: e.receivedAt,
    canonicalEventType: e.type,
    ...(stored.length === 0
      ? {}
      : {
          deliveries: stored.map(([d, t]) => ({ ...deliveryToDoc(d, t.p, []), ...(t.bulkJobId ? { bulkJobId: t.bulkJobId, attemptBase: 0 } : {}) })),
          forwardState: aggregateOf(stored.map(([, t]) => t.p)) ?? null,
          outboxAt: times.length > 0 ? Math.min(...times) : null,
        }),
  };
}

function copy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

const progress: fc.Arbitrary<DeliveryProgress> = fc.record({
  state: fc.constantFrom(undefined, ...DELIVERY_STATES),
  target: fc.constant("https://a.example.test/"),
  nextAttemptAt: fc.option(fc.integer({ min: 0, max: 20 }), { nil: undefined }),
  claimOwner: fc.option(fc.constantFrom("w1", "w2"), { nil: undefined }),
  claimUntil: fc.option(fc.integer({ min: 0, max: 20 }), { nil: undefined }),
  started: fc.integer({ min: 0, max: 4 }),
  spared: fc.integer({ min: 0, max: 1 }),
}).map((p) => ({ ...p, spared: Math.min(p.spared, p.started) }));
const tagged: fc.Arbitrary<Tagged> = fc.record({
  p: progress.map((p) => (p.state === undefined ? NEVER_FORWARDED : p)),
  bulkJobId: fc.constantFrom(undefined, JOB, "job-2"),
});
const eventSpec = (id: string, receivedAt: number): fc.Arbitrary<EventSpec> =>
  fc.record({
    id: fc.constant(id),
    receivedAt: fc.constant(receivedAt),
    type: fc.constantFrom("invoice.paid", "invoice.failed"),
    deliveries: fc.tuple(tagged, tagged, tagged).map((ts) => DESTINATIONS.map((d, i): [string, Tagged] => [d, ts[i]!])),
  });
/** Up to six events, received in order (two share a time, ordered by id). */
const events = fc.tuple(...[1, 2, 2, 3, 4, 5].map((t, i) => eventSpec(`e${i}`, t))).chain((all) => fc.subarray(all));

const filterArb: fc.Arbitrary<RedeliveryFilter> = fc.record(
  { eventType: fc.constantFrom("invoice.paid", "invoice.failed"), forwardState: fc.constantFrom("pending", "delivered", "failed", "none") },
  { requiredKeys: [] },
);
const destinationsArb = fc.subarray([...DESTINATIONS], { minLength: 1 });
const cursorArb = fc.option(fc.constantFrom(...[1, 2, 2, 3, 4, 5].map((t, i) => ({ receivedAt: t, id: `e${i}` }))), { nil: undefined });

/** What the reference says a selection takes: the events the list's filter keeps, in bounds, and their deliveries redoes() keeps. */
function expected(specs: EventSpec[], s: RedeliverySelection): { events: string[]; count: number } {
  const after = (e: EventSpec, c: { receivedAt: number; id: string }) => e.receivedAt > c.receivedAt || (e.receivedAt === c.receivedAt && e.id > c.id);
  const taken = specs.filter((e) => {
    const doc = eventDoc(e);
    if (s.filter.eventType !== undefined && e.type !== s.filter.eventType) return false;
    if (s.filter.forwardState !== undefined && (doc.forwardState ?? null) !== (s.filter.forwardState === "none" ? null : s.filter.forwardState)) return false;
    if (s.after && !after(e, s.after)) return false;
    if (s.until && after(e, s.until)) return false;
    return true;
  });
  const redone = (e: EventSpec) => e.deliveries.filter(([d, t]) => redoes(d, t.p.state, s.destinations) && (s.jobId === undefined || t.bulkJobId !== s.jobId)).length;
  const withAny = taken.filter((e) => redone(e) > 0);
  return { events: withAny.map((e) => e.id), count: withAny.reduce((n, e) => n + redone(e), 0) };
}

const sumOf = (pipeline: Doc[], docs: Doc[]) => ((new Aggregator(pipeline).run(docs)[0] as { n?: number } | undefined)?.n ?? 0);

describe("MongoDB bulk redelivery documents, evaluated by mingo", () => {
  it("selects and counts exactly the deliveries redoes() keeps, of the events the list's filter keeps, within the job's bounds", () => {
    fc.assert(
      fc.property(events, filterArb, destinationsArb, cursorArb, cursorArb, fc.boolean(), (specs, filter, destinations, after, until, asJob) => {
        const docs = specs.map(eventDoc);
        const s: RedeliverySelection = { accountId: "acct", endpointId: "ep", filter, destinations, after, until, ...(asJob ? { jobId: JOB } : {}) };
        const want = expected(specs, s);
        const found = new Query(redeliveryFilter(s)).find<Doc>(docs).sort({ receivedAt: 1, _id: 1 }).all().map((d) => d._id);
        expect(found, JSON.stringify({ specs, s })).toEqual(want.events);
        expect(sumOf(redeliveryCountPipeline(s), docs)).toBe(want.count);
      }),
      { numRuns: 500 },
    );
  });

  it("takes nothing of another account's or endpoint's events", () => {
    const doc = eventDoc({ id: "x", receivedAt: 1, type: "t", deliveries: [["d-a", { p: { ...NEVER_FORWARDED, state: "delivered", target: "t" } }]] });
    for (const s of [{ accountId: "other", endpointId: "ep" }, { accountId: "acct", endpointId: "other" }]) {
      expect(new Query(redeliveryFilter({ ...s, filter: {}, destinations: ["d-a"] })).test(doc)).toBe(false);
    }
    expect(new Query(redeliveryFilter({ accountId: "acct", endpointId: "ep", filter: {}, destinations: ["d-a"] })).test(doc)).toBe(true);
  });

  it("puts back each delivery redoes() keeps like requeuedDelivery, tagged with the job and its attempt count; the rest as it was; once", () => {
    fc.assert(
      fc.property(eventSpec("e", 1), destinationsArb, fc.integer({ min: 0, max: 30 }), (spec, destinations, now) => {
        const before = eventDoc(spec);
        const docs = [copy(before)];
        updateMany(docs, { _id: "e" }, requeueUpdate({ destinations, jobId: JOB }, now) as never);
        const doc = docs[0] as AnyDoc;
        const after: [string, DeliveryProgress][] = [];
        for (const [d, t] of spec.deliveries) {
          if (t.p.state === undefined) continue;
          const stored = (doc.deliveries as Doc[]).find((x) => x.destinationId === d)!;
          if (redoes(d, t.p.state, destinations) && t.bulkJobId !== JOB) {
            expect(deliveryOfDoc(doc, d)).toEqual(requeuedDelivery(t.p, now));
            // Held attempts were never counted: the budget starts after the counted ones (design §18).
            expect([stored.bulkJobId, stored.attemptBase]).toEqual([JOB, t.p.started - t.p.spared]);
            after.push([d, requeuedDelivery(t.p, now)]);
          } else {
            expect(stored).toEqual((before.deliveries as Doc[]).find((x) => x.destinationId === d));
            after.push([d, t.p]);
          }
        }
        const times = after.map(([, p]) => claimableAt(p)).filter((x): x is number => x !== undefined);
        expect({ forwardState: doc.forwardState ?? null, outboxAt: doc.outboxAt ?? null }).toEqual({
          forwardState: after.length ? (aggregateOf(after.map(([, p]) => p)) ?? null) : null,
          outboxAt: times.length ? Math.min(...times) : null,
        });
        // Run again (a page interrupted before its cursor moved): nothing more changes.
        const again = [copy(doc)];
        updateMany(again, { _id: "e" }, requeueUpdate({ destinations, jobId: JOB }, now + 1) as never);
        expect(again[0]).toEqual(doc);
      }),
      { numRuns: 500 },
    );
  });

  it("counts the job's tagged deliveries within a page's bounds, and its open ones", () => {
    fc.assert(
      fc.property(events, cursorArb, cursorArb, (specs, after, upTo) => {
        const docs = specs.map(eventDoc);
        const inBounds = (e: EventSpec) =>
          (!after || e.receivedAt > after.receivedAt || (e.receivedAt === after.receivedAt && e.id > after.id)) &&
          (!upTo || e.receivedAt < upTo.receivedAt || (e.receivedAt === upTo.receivedAt && e.id <= upTo.id));
        const mine = (e: EventSpec, open: boolean) =>
          e.deliveries.filter(([, t]) => t.p.state !== undefined && t.bulkJobId === JOB && (!open || t.p.state === "pending" || t.p.state === "held")).length;
        expect(sumOf(taggedCountPipeline("ep", JOB, { after, upTo }), docs)).toBe(specs.filter(inBounds).reduce((n, e) => n + mine(e, false), 0));
        expect(sumOf(openCountPipeline("ep", JOB), docs)).toBe(specs.reduce((n, e) => n + mine(e, true), 0));
        expect(sumOf(taggedCountPipeline("other", JOB), docs)).toBe(0);
      }),
      { numRuns: 300 },
    );
  });

  it("tells from a record which job's delivery it ended, and how (endedOutcome), once", () => {
    const transition: fc.Arbitrary<AttemptTransition> = fc.oneof(
      fc.constant<AttemptTransition>({ kind: "direct" }),
      fc.record({ kind: fc.constant("worker" as const), owner: fc.constantFrom("w1", "w2"), state: fc.constantFrom(...DELIVERY_STATES), nextAttemptAt: fc.constant(50) }),
    );
    fc.assert(
      fc.property(tagged, fc.integer({ min: 1, max: 5 }), fc.constantFrom(0, 200, 500), transition, (t, n, status, tr) => {
        fc.pre(t.p.state !== undefined);
        const spec: EventSpec = { id: "ev", receivedAt: 1, type: "x", deliveries: [["d-a", t]] };
        const attempt = forwardAttemptFixture(n, { status, trigger: "bulk" });
        const docs = [eventDoc(spec)];
        const ref = { accountId: "acct", endpointId: "ep", eventId: "ev", destinationId: "d-a" };
        updateMany(docs, eventRefFilter(ref), recordUpdate(ref, attempt, tr) as never);
        const doc = docs[0] as AnyDoc;
        const after = recordedDelivery(t.p, attempt, tr);
        const outcome = t.bulkJobId ? endedOutcome(t.p.state, after.state) : undefined;
        expect(doc.bulkEnded ?? null, JSON.stringify({ t, n, status, tr })).toEqual(outcome ? { jobId: t.bulkJobId, outcome } : null);
        // The tag stays with the delivery through the record.
        expect(((doc.deliveries as Doc[])[0]!.bulkJobId as string | undefined) ?? undefined).toBe(t.bulkJobId);
        expect(deliveryOfDoc(doc, "d-a")).toEqual(after);
        // The same attempt recorded again (a retried call) ends nothing more.
        updateMany(docs, eventRefFilter(ref), recordUpdate(ref, attempt, tr) as never);
        expect((docs[0] as AnyDoc).bulkEnded ?? null).toBeNull();
      }),
      { numRuns: 600 },
    );
  });

  it("claims a running job nobody holds (isClaimableJob), the one whose lease ended first and never-leased first; writes only the version read", () => {
    const job = (id: string, state: RedeliveryJobRecord["state"], leaseUntil: number | undefined, createdAt: number): AnyDoc =>
      jobDoc({ ...newRedeliveryJob({ id, accountId: "acct", endpointId: "ep", filter: {}, createdAt, createdByKeyId: "k", createdByKeyPrefix: "p" }, 3, { receivedAt: 1, id: "e" }), state, leaseUntil, leaseOwner: leaseUntil === undefined ? undefined : "w" }, 0);
    const docs = [job("held", "running", 50, 1), job("lapsed", "running", 9, 2), job("fresh", "running", undefined, 3), job("done", "done", undefined, 0), job("released", "running", 10, 0)];
    for (const now of [0, 9, 10, 50]) {
      const found = new Query(claimableJobFilter(now)).find<AnyDoc>(docs).all().map((d) => d._id).sort();
      const reference = docs.filter((d) => isClaimableJob(redeliveryJobDocs.read(d), now)).map((d) => d._id).sort();
      expect(found, String(now)).toEqual(reference);
    }
    expect(new Query(claimableJobFilter(10)).find<AnyDoc>(docs).sort(CLAIM_JOB_ORDER).all().map((d) => d._id)).toEqual(["fresh", "lapsed", "released"]);
    // A document read at rev 0 is written only while it is still at rev 0.
    const read = docs[2]!;
    expect(new Query(jobWriteFilter("fresh", revOf(read))).test(read)).toBe(true);
    expect(new Query(jobWriteFilter("fresh", revOf(read))).test({ ...read, rev: 1 })).toBe(false);
    expect(redeliveryJobDocs.read(read)).toEqual(redeliveryJobDocs.read(jobDoc(redeliveryJobDocs.read(read), 4)));
  });
});
