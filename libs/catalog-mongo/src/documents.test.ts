import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { Query, updateMany } from "mingo";
import { nextStamp, type Cursor, type EventQuery, type Stamp } from "@whc/catalog-core";
import {
  NEWEST_FIRST,
  OLDEST_FIRST,
  appendCounterUpdate,
  chargeFilter,
  chargeUpdate,
  counterId,
  excludedFilter,
  markReadFilter,
  olderThan,
  pageFilter,
  removedCounterUpdate,
  type Doc,
} from "./documents.js";

/** Documents shaped exactly as the adapter stores them (tokens as hex strings here). */
interface EventDoc extends Doc {
  _id: string;
  endpointId: string;
  accountId: string;
  receivedAt: number;
  canonicalEventType: string;
  provider: string;
  responseCode: number;
  verification: string;
  bodyStored: boolean;
  tokens?: string[];
  readAt?: number;
}

function fixtures(count: number, clockSteps: number[], seed = 0): EventDoc[] {
  let clock = 1_800_000_000_000;
  let step = 0;
  let last: Stamp | undefined;
  const stamp = () => (last = nextStamp(last?.id, (clock += clockSteps[step++ % clockSteps.length]!)));
  const words = ["red", "green", "blue", "apple"];
  return Array.from({ length: count }, (_, i) => {
    const s = stamp();
    const stored = (i + seed) % 7 !== 0;
    return {
      _id: s.id,
      endpointId: i % 5 === 4 ? "other" : "ep",
      accountId: "acct",
      receivedAt: s.receivedAt,
      canonicalEventType: i % 3 === 0 ? "a" : "b",
      provider: i % 2 ? "stripe" : "github",
      responseCode: i % 4 === 0 ? 413 : 200,
      verification: i % 3 === 1 ? "failed" : "verified",
      bodyStored: stored,
      ...(stored ? { tokens: words.filter((_, w) => ((i + seed) >> w) & 1) } : {}),
    };
  });
}

const q = (extra: Partial<EventQuery> = {}): EventQuery => ({ accountId: "acct", endpointId: "ep", limit: 5, ...extra });

function run(docs: EventDoc[], filter: Doc, sort: Doc, limit?: number): EventDoc[] {
  let cursor = new Query(filter).find<EventDoc>(docs).sort(sort as Record<string, 1 | -1>);
  if (limit !== undefined) cursor = cursor.limit(limit);
  return cursor.all() as EventDoc[];
}

/** The reference: a plain JavaScript filter and sort over the same fixtures. */
function reference(docs: EventDoc[], query: EventQuery, tokens?: string[]): EventDoc[] {
  return docs
    .filter((d) => d.endpointId === query.endpointId && d.accountId === query.accountId)
    .filter((d) => query.fromMs === undefined || d.receivedAt >= query.fromMs)
    .filter((d) => query.toMs === undefined || d.receivedAt < query.toMs)
    .filter((d) => query.eventType === undefined || d.canonicalEventType === query.eventType)
    .filter((d) => query.provider === undefined || d.provider === query.provider)
    .filter((d) => query.responseCode === undefined || d.responseCode === query.responseCode)
    .filter((d) => query.verification === undefined || d.verification === query.verification)
    .filter((d) => !tokens || (d.bodyStored && tokens.every((t) => d.tokens?.includes(t))))
    .sort((a, b) => b.receivedAt - a.receivedAt || (a._id < b._id ? 1 : -1));
}

describe("MongoDB query documents, evaluated by mingo", () => {
  it("pages newest first by (receivedAt, _id) without skipping or repeating, many events per millisecond", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 10 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 6 }),
        (steps, count, limit) => {
          const docs = fixtures(count, steps);
          const seen: string[] = [];
          let before: Cursor | undefined;
          for (let i = 0; i < 100; i += 1) {
            const page = run(docs, pageFilter(q({ before, limit })), NEWEST_FIRST, limit + 1);
            seen.push(...page.slice(0, limit).map((d) => d._id));
            if (page.length <= limit) break;
            const last = page[limit - 1]!;
            before = { receivedAt: last.receivedAt, id: last._id };
          }
          expect(seen).toEqual(reference(docs, q()).map((d) => d._id));
        },
      ),
      { numRuns: 200 },
    );
  });

  it("gives the `limit` events just newer than an after cursor", () => {
    const docs = fixtures(30, [0, 0, 1]);
    const all = reference(docs, q());
    const pivot = all[20]!;
    const page = run(docs, pageFilter(q({ after: { receivedAt: pivot.receivedAt, id: pivot._id } })), OLDEST_FIRST, 3).reverse();
    expect(page.map((d) => d._id)).toEqual(all.slice(17, 20).map((d) => d._id));
    const probe = run(docs, pageFilter(q(), undefined, olderThan({ receivedAt: page[2]!.receivedAt, id: page[2]!._id })), NEWEST_FIRST, 1);
    expect(probe.map((d) => d._id)).toEqual([pivot._id]);
  });

  it("applies every filter alone and together, like the reference", () => {
    const docs = fixtures(60, [0, 1, 3]);
    const mid = reference(docs, q())[15]!.receivedAt;
    const cases: Partial<EventQuery>[] = [
      { eventType: "a" },
      { provider: "stripe" },
      { responseCode: 413 },
      { verification: "failed" },
      { fromMs: mid },
      { toMs: mid },
      { fromMs: mid - 20, toMs: mid + 5, provider: "github", eventType: "b" },
    ];
    for (const extra of cases) {
      const query = q({ ...extra, limit: 100 });
      expect(run(docs, pageFilter(query), NEWEST_FIRST).map((d) => d._id), JSON.stringify(extra)).toEqual(
        reference(docs, query).map((d) => d._id),
      );
    }
  });

  it("searches with AND semantics, leaves metadata-only events out and counts them", () => {
    const docs = fixtures(80, [1], 3);
    for (const tokens of [["red"], ["red", "blue"], ["apple", "green", "blue"], ["none"]]) {
      expect(run(docs, pageFilter(q({ limit: 100 }), tokens), NEWEST_FIRST).map((d) => d._id), tokens.join()).toEqual(
        reference(docs, q(), tokens).map((d) => d._id),
      );
    }
    const excluded = run(docs, excludedFilter(q()), NEWEST_FIRST);
    expect(excluded.length).toBe(docs.filter((d) => d.endpointId === "ep" && !d.bodyStored).length);
    expect(excluded.length).toBeGreaterThan(0);
  });

  it("charges the daily allowance only below the limit", () => {
    const counters: Doc[] = [{ _id: counterId("a", "2026-01-01"), accountId: "a", day: "2026-01-01", used: 2 }];
    const matched = (limit: number) => new Query(chargeFilter("a", "2026-01-01", limit)).find(counters).all().length;
    expect(matched(3)).toBe(1);
    expect(matched(2)).toBe(0);
    // mingo has no $setOnInsert (it only applies when the upsert inserts): apply the $inc part.
    const update = chargeUpdate("a", "2026-01-01") as { $inc: Doc; $setOnInsert: Doc };
    expect(update.$setOnInsert).toEqual({ accountId: "a", day: "2026-01-01" });
    updateMany(counters, chargeFilter("a", "2026-01-01", 3), { $inc: update.$inc } as never);
    expect(counters[0]!.used).toBe(3);
    expect(matched(3)).toBe(0);
    expect(new Query(chargeFilter("b", "2026-01-01", 3)).find(counters).all()).toHaveLength(0);
  });

  it("keeps endpoint counters exact: appends, deletes (never below zero), purges", () => {
    // mingo may replace a document in its array when it updates it: read it back from there.
    const docs: Doc[] = [{ _id: "ep", eventCount: 1, lastEventAt: 500, purgedEventCount: 0 }];
    updateMany(docs, { _id: "ep" }, appendCounterUpdate(3, 400) as never);
    expect(docs[0]).toMatchObject({ eventCount: 4, lastEventAt: 500 });
    updateMany(docs, { _id: "ep" }, appendCounterUpdate(1, 900) as never);
    expect(docs[0]).toMatchObject({ eventCount: 5, lastEventAt: 900 });
    updateMany(docs, { _id: "ep" }, removedCounterUpdate(2) as never);
    expect(docs[0]).toMatchObject({ eventCount: 3, purgedEventCount: 0 });
    updateMany(docs, { _id: "ep" }, removedCounterUpdate(10, 1234) as never);
    expect(docs[0]).toMatchObject({ eventCount: 0, purgedEventCount: 10, lastPurgedAt: 1234 });
  });

  it("marks an event read only once", () => {
    const docs: Doc[] = [{ _id: "e1", endpointId: "ep", accountId: "acct" }];
    expect(updateMany(docs, markReadFilter("acct", "ep", "e1"), { $set: { readAt: 1 } } as never).modifiedCount).toBe(1);
    expect(updateMany(docs, markReadFilter("acct", "ep", "e1"), { $set: { readAt: 2 } } as never).modifiedCount).toBe(0);
    expect(docs[0]!.readAt).toBe(1);
    expect(new Query(markReadFilter("other", "ep", "e1")).find(docs).all()).toHaveLength(0);
  });
});
