import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { Query, updateMany } from "mingo";
import { nextStamp, type Cursor } from "@whc/catalog-core";
import { OLDEST_FIRST, pageFilter, type Doc } from "./documents.js";
import { LAST_STAMP, STAMPING_PROJECTION, newestEventQuery, stampedAppendUpdate } from "./stamp-documents.js";

/** One append as the adapter makes it, run by mingo over in-memory collections. */
function append(endpoints: Doc[], events: Doc[], endpointId: string, count: number, now: number): string[] {
  const [endpoint] = new Query({ _id: endpointId }).find<Doc>(endpoints, STAMPING_PROJECTION).all() as Doc[];
  if (!endpoint) return [];
  let last = endpoint[LAST_STAMP] as string | undefined;
  if (last === undefined) {
    const { filter, sort } = newestEventQuery(endpointId);
    last = (new Query(filter).find<Doc>(events).sort(sort as Record<string, 1 | -1>).limit(1).all()[0] as Doc | undefined)?._id as string;
  }
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const s = nextStamp(last, now);
    last = s.id;
    ids.push(s.id);
    events.push({ _id: s.id, endpointId, accountId: "acct", receivedAt: s.receivedAt });
  }
  const newest = events[events.length - 1] as Doc;
  updateMany(endpoints, { _id: endpointId }, stampedAppendUpdate(count, newest.receivedAt as number, last) as never);
  return ids;
}

describe("MongoDB per-endpoint stamp documents, evaluated by mingo", () => {
  it("moves the last stamp forward only, beside the counters", () => {
    const endpoints: Doc[] = [{ _id: "ep", eventCount: 0, purgedEventCount: 0 }];
    updateMany(endpoints, { _id: "ep" }, stampedAppendUpdate(2, 500, "0190-b") as never);
    expect(endpoints[0]).toMatchObject({ eventCount: 2, lastEventAt: 500, [LAST_STAMP]: "0190-b" });
    updateMany(endpoints, { _id: "ep" }, stampedAppendUpdate(1, 400, "0190-a") as never);
    expect(endpoints[0]).toMatchObject({ eventCount: 3, lastEventAt: 500, [LAST_STAMP]: "0190-b" });
  });

  it("starts an endpoint without a last stamp after its newest event", () => {
    const old = nextStamp(undefined, 2_000_000_000_000);
    const endpoints: Doc[] = [{ _id: "ep", eventCount: 1 }];
    const events: Doc[] = [{ _id: old.id, endpointId: "ep", receivedAt: old.receivedAt }, { _id: "ffff", endpointId: "other", receivedAt: 9e12 }];
    const [id] = append(endpoints, events, "ep", 1, 1_000);
    expect(id! > old.id).toBe(true);
    expect(endpoints[0]![LAST_STAMP]).toBe(id);
  });

  // Appends of several catalogs to one endpoint, each run whole (a transaction) in any order,
  // with clocks that disagree, and a reader polling with `after` between them: it sees every
  // event once, in commit order.
  it("lets a reader polling with after see every event once, in commit order", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ count: fc.integer({ min: 1, max: 5 }), skew: fc.integer({ min: -20, max: 20 }), poll: fc.boolean() }), {
          minLength: 1,
          maxLength: 40,
        }),
        fc.integer({ min: 1, max: 6 }),
        (appends, limit) => {
          const endpoints: Doc[] = [{ _id: "ep", accountId: "acct", eventCount: 0 }];
          const events: Doc[] = [];
          const committed: string[] = [];
          const seen: string[] = [];
          let after: Cursor = { receivedAt: 0, id: "" };
          const poll = () => {
            for (;;) {
              const filter = pageFilter({ accountId: "acct", endpointId: "ep", after, limit });
              const page = new Query(filter).find<Doc>(events).sort(OLDEST_FIRST).limit(limit).all() as Doc[];
              if (page.length === 0) return;
              seen.push(...page.map((d) => d._id as string));
              const newest = page[page.length - 1]!;
              after = { receivedAt: newest.receivedAt as number, id: newest._id as string };
            }
          };
          let clock = 1_900_000_000_000;
          for (const a of appends) {
            clock += 3;
            committed.push(...append(endpoints, events, "ep", a.count, clock + a.skew));
            if (a.poll) poll();
          }
          poll();
          expect(seen).toEqual(committed);
        },
      ),
    );
  });
});
