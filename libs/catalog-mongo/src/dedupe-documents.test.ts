import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { Query } from "mingo";
import { dedupeDecision } from "@whc/catalog-core";
import { eventFixture } from "@whc/catalog-core/testing";
import { claimFilter, forwardStateFilter } from "./delivery-documents.js";
import { baseFilter } from "./documents.js";
import { dedupeKeyFilter, dedupeOutcomeOf, endpointDedupeKeysFilter, expiredDedupeKeysFilter, keptDedupeKeyDoc } from "./dedupe-documents.js";
import { eventFromDoc, eventToDoc, summaryDocs, type AnyDoc } from "./records.js";

/**
 * The MongoDB adapter's deduplication documents (ADR 0083), checked with mingo against
 * catalog-core's reference: the key documents the append reads and writes, the purge's and the
 * endpoint's filters, and the events it writes for a duplicate (outside the outbox, listed by
 * the `duplicate` filter).
 */

const ENDPOINT = "01a20000-0000-7000-8000-0000000000e1";
const OTHER = "01a20000-0000-7000-8000-0000000000e2";
const hash = (n: number) => new Uint8Array(32).fill(n);
const matches = (filter: Record<string, unknown>, docs: AnyDoc[]) => new Query(filter).find(docs).all().map((d) => (d as AnyDoc)._id);

describe("deduplication key documents", () => {
  it("decide as the reference does, for any stored key and any time", () => {
    fc.assert(
      fc.property(
        fc.option(fc.record({ firstEventId: fc.uuid(), expiresAt: fc.integer({ min: 0, max: 2_000_000 }) }), { nil: undefined }),
        fc.integer({ min: 0, max: 2_000_000 }),
        fc.integer({ min: 1, max: 1_000_000 }),
        (stored, receivedAt, windowMs) => {
          const stamp = { id: "01a20000-0000-7000-8000-0000000000aa", receivedAt };
          const doc = stored ? keptDedupeKeyDoc(ENDPOINT, hash(1), stored) : null;
          expect(dedupeOutcomeOf(doc, stamp, windowMs)).toEqual(dedupeDecision(stored, stamp, windowMs));
        },
      ),
    );
  });

  it("name one document per endpoint and key, never the key in clear", () => {
    const a = keptDedupeKeyDoc(ENDPOINT, hash(1), { firstEventId: "e1", expiresAt: 10 });
    const docs = [a, keptDedupeKeyDoc(ENDPOINT, hash(2), { firstEventId: "e2", expiresAt: 20 }), keptDedupeKeyDoc(OTHER, hash(1), { firstEventId: "e3", expiresAt: 30 })];
    expect(new Set(docs.map((d) => d._id)).size).toBe(3);
    expect(matches(dedupeKeyFilter(ENDPOINT, hash(1)), docs)).toEqual([a._id]);
    expect(matches(endpointDedupeKeysFilter(ENDPOINT), docs)).toEqual([docs[0]!._id, docs[1]!._id]);
    expect(Object.keys(a).sort()).toEqual(["_id", "endpointId", "expiresAt", "firstEventId"]);
  });

  it("purge exactly the keys whose window ended by now", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 100 }), { maxLength: 20 }), fc.integer({ min: 0, max: 100 }), (ends, now) => {
        const docs = ends.map((expiresAt, i) => keptDedupeKeyDoc(ENDPOINT, hash(i), { firstEventId: `e${i}`, expiresAt }));
        expect(matches(expiredDedupeKeysFilter(now), docs)).toEqual(docs.filter((d) => (d.expiresAt as number) <= now).map((d) => d._id));
      }),
    );
  });
});

describe("a duplicate's event document", () => {
  const endpoint = { id: ENDPOINT, accountId: "acct" };
  const forward = { scheduled: true, deliveries: [{ destinationId: "01a20000-0000-7000-8000-0000000000d1", target: "t" }] };
  const first = eventToDoc(eventFixture(endpoint, { forward }), { id: "01a20000-0000-7000-8000-000000000001", receivedAt: 1000 });
  const second = eventToDoc(eventFixture(endpoint, { forward }), { id: "01a20000-0000-7000-8000-000000000002", receivedAt: 2000 }, 200, first._id);

  it("holds duplicateOf, its deliveries duplicate and outside the outbox", () => {
    expect(second.duplicateOf).toBe(first._id);
    expect(first.duplicateOf).toBeUndefined();
    expect(second.forwardState).toBe("duplicate");
    expect(second.outboxAt).toBeNull();
    expect(eventFromDoc(second).deliveries.map((d) => [d.state, d.nextAttemptAt])).toEqual([["duplicate", undefined]]);
    expect(eventFromDoc(second).duplicateOf).toBe(first._id);
    expect(summaryDocs.read(second).duplicateOf).toBe(first._id);
    expect(matches(claimFilter(10_000), [first, second])).toEqual([first._id]);
    expect(matches(forwardStateFilter("duplicate"), [first, second])).toEqual([second._id]);
  });

  it("is listed by duplicate=true and left out by duplicate=false", () => {
    const q = { accountId: "acct", endpointId: ENDPOINT, limit: 50 };
    expect(matches(baseFilter({ ...q, duplicate: true }), [first, second])).toEqual([second._id]);
    expect(matches(baseFilter({ ...q, duplicate: false }), [first, second])).toEqual([first._id]);
    expect(matches(baseFilter(q), [first, second])).toEqual([first._id, second._id]);
  });
});
