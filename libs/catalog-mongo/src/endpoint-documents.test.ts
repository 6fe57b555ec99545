import { describe, it, expect } from "vitest";
import { Query, updateOne } from "mingo";
import { newId } from "@whc/catalog-core";
import { BY_ID, endpointPageFilter, endpointQuotaGuard, type Doc } from "./documents.js";

/** Endpoint documents as the adapter stores them (only the fields its queries read). */
interface EndpointDoc extends Doc {
  _id: string;
  accountId: string;
  slug: string;
}

function endpointDocs(accountId: string, count: number): EndpointDoc[] {
  return Array.from({ length: count }, (_, i) => ({ _id: newId(), accountId, slug: `${accountId}-${i}` }));
}

/** A stable shuffle: the server returns documents in no particular order without a sort. */
function shuffled<T>(items: T[]): T[] {
  return items.map((item, i) => ({ item, k: (i * 7919) % 1009 })).sort((a, b) => a.k - b.k).map((x) => x.item);
}

/** countDocuments(filter, { limit }) as the adapter asks for it. */
function count(docs: Doc[], filter: Doc, limit?: number): number {
  const found = new Query(filter).find(docs);
  return (limit === undefined ? found : found.limit(limit)).all().length;
}

/** One page as the adapter asks for it: the filter, BY_ID, the limit. */
function page(docs: EndpointDoc[], accountId: string, limit: number, after?: string): EndpointDoc[] {
  return new Query(endpointPageFilter(accountId, after)).find<EndpointDoc>(docs).sort(BY_ID).limit(limit).all() as EndpointDoc[];
}

function walk(docs: EndpointDoc[], accountId: string, limit: number, after?: string): string[] {
  const ids: string[] = [];
  let cursor = after;
  for (;;) {
    const found = page(docs, accountId, limit, cursor);
    if (found.length === 0) return ids;
    ids.push(...found.map((d) => d._id));
    cursor = found.at(-1)!._id;
  }
}

describe("MongoDB endpoint page documents (checked with mingo)", () => {
  const mine = endpointDocs("acct-a", 250);
  const theirs = endpointDocs("acct-b", 40);
  const stored = shuffled([...mine, ...theirs]);
  const expected = mine.map((d) => d._id);

  it("walk every endpoint of the account exactly once, by id, with limits 1, 100 and 500", () => {
    expect([...expected].sort()).toEqual(expected);
    for (const limit of [1, 100, 500]) expect(walk(stored, "acct-a", limit), `limit ${limit}`).toEqual(expected);
    expect(new Query(endpointPageFilter("acct-a")).find<EndpointDoc>(stored).sort(BY_ID).all().map((d) => d._id)).toEqual(expected);
  });

  it("go on after an endpoint that was deleted, and never reach another account's", () => {
    const gone = mine[99]!._id;
    const remaining = stored.filter((d) => d._id !== gone);
    expect(page(remaining, "acct-a", 100, gone).map((d) => d._id)).toEqual(expected.slice(100, 200));
    expect(walk(remaining, "acct-b", 7, mine[0]!._id)).toEqual(theirs.map((d) => d._id).filter((id) => id > mine[0]!._id));
    expect(page(remaining, "acct-a", 10, expected.at(-1))).toEqual([]);
  });
});

describe("MongoDB endpoint quota documents (checked with mingo)", () => {
  it("count the creating account's endpoints and no other's", () => {
    const docs = shuffled([...endpointDocs("acct-a", 12), ...endpointDocs("acct-b", 30)]);
    expect(count(docs, endpointPageFilter("acct-a"))).toBe(12);
    expect(count(docs, endpointPageFilter("acct-b"))).toBe(30);
  });

  it("move the creating account's document, and only it: two creates of one account conflict, of two accounts not", () => {
    const accounts: Doc[] = [
      { _id: "acct-a", name: "a", createdAt: 1 },
      { _id: "acct-b", name: "b", createdAt: 1, endpointCreates: 4 },
    ];
    const guard = endpointQuotaGuard("acct-a");
    expect(updateOne(accounts, guard.filter, guard.update as never).modifiedCount).toBe(1);
    expect(updateOne(accounts, guard.filter, guard.update as never).modifiedCount).toBe(1);
    expect(accounts).toEqual([
      { _id: "acct-a", name: "a", createdAt: 1, endpointCreates: 2 },
      { _id: "acct-b", name: "b", createdAt: 1, endpointCreates: 4 },
    ]);
  });

  it("leave an account at the quota however many creates come, when the guard makes them take turns", () => {
    // What MongoDB's write conflict on the account document amounts to: overlapping creates of
    // one account run one after the other, each counting what the ones before inserted.
    const accounts: Doc[] = [{ _id: "acct-a", name: "a", createdAt: 1 }];
    const docs: EndpointDoc[] = endpointDocs("acct-b", 5);
    const quota = 9;
    let refused = 0;
    for (const doc of endpointDocs("acct-a", 30)) {
      const guard = endpointQuotaGuard(doc.accountId);
      updateOne(accounts, guard.filter, guard.update as never);
      if (count(docs, endpointPageFilter(doc.accountId), quota) >= quota) refused += 1;
      else docs.push(doc);
    }
    expect(refused).toBe(21);
    expect(count(docs, endpointPageFilter("acct-a"))).toBe(quota);
    expect(accounts[0]!.endpointCreates).toBe(30);
  });
});
