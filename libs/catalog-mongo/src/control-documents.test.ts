import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { Query, updateMany } from "mingo";
import { randomUUID } from "node:crypto";
import {
  NEVER_FORWARDED,
  PACED_SEND_DELAY_MS,
  claimableAt,
  claimedDelivery,
  letThroughClaim,
  heldDelivery,
  isClaimable,
  probedDelivery,
  releasedDelivery,
  type DeliveryProgress,
} from "@whc/catalog-core";
import { forwardAttemptFixture } from "@whc/catalog-core/testing";
import { DELIVERY_STATES } from "@whc/api-model";
import {
  candidatesFilter,
  claimOneUpdate,
  claimableOneFilter,
  heldFilter,
  heldOneFilter,
  holdOneUpdate,
  holdWaitingUpdate,
  moveOneUpdate,
  probeOneUpdate,
  releaseOneUpdate,
  waitingFilter,
  type BreakerDoc,
} from "./control-documents.js";
import { createMongoDeliveryControl } from "./delivery-control.js";
import { recordUpdate } from "./delivery-documents.js";
import { deliveryOfDoc, deliveryToDoc, type AnyDoc } from "./records.js";
import type { Doc } from "./documents.js";

/*
 * Delivery control's documents, evaluated by mingo against catalog-core's reference functions
 * (as delivery-documents.test.ts does for the outbox), and its flow run over collections mingo
 * answers for: the decisions a MongoDB catalog takes, without a server here.
 */

const D = "d-a";
const OTHER = "d-b";

const progress: fc.Arbitrary<DeliveryProgress> = fc.record({
  state: fc.constantFrom(...DELIVERY_STATES),
  target: fc.constant("t"),
  nextAttemptAt: fc.option(fc.integer({ min: 0, max: 20 }), { nil: undefined }),
  claimOwner: fc.option(fc.constantFrom("w1", "w2"), { nil: undefined }),
  claimUntil: fc.option(fc.integer({ min: 0, max: 20 }), { nil: undefined }),
  started: fc.integer({ min: 0, max: 3 }),
  spared: fc.integer({ min: 0, max: 2 }),
});

/** An event with a delivery to D and one to OTHER, with the summary the store keeps (outboxAt: the earliest claimable). */
function eventDoc(mine: DeliveryProgress, other: DeliveryProgress, id = "ev"): AnyDoc {
  const times = [mine, other].map(claimableAt).filter((t): t is number => t !== undefined);
  return {
    _id: id,
    accountId: "a",
    endpointId: "e",
    deliveries: [deliveryToDoc(D, mine, []), deliveryToDoc(OTHER, other, [])],
    outboxAt: times.length > 0 ? Math.min(...times) : null,
  };
}

/** The update applied by mingo when the filter matches: the document after, and whether it matched. */
function applied(doc: AnyDoc, filter: Doc, update: Doc[]): { doc: AnyDoc; matched: boolean } {
  const docs = [structuredClone(doc)];
  const { matchedCount } = updateMany(docs, filter, update as never);
  return { doc: docs[0] as AnyDoc, matched: matchedCount > 0 };
}

const waitingAt = (p: DeliveryProgress, now: number) => p.state === "pending" && p.nextAttemptAt !== undefined && (p.claimUntil ?? 0) <= now;

describe("delivery control's documents, evaluated by mingo", () => {
  it("claims, holds and moves one delivery exactly when it is claimable with the counter the claim saw", () => {
    fc.assert(
      fc.property(progress, progress, fc.integer({ min: 0, max: 25 }), fc.integer({ min: 0, max: 3 }), (mine, other, now, started) => {
        const doc = eventDoc(mine, other);
        const applies = isClaimable(mine, now) && mine.started === started;
        const claim = applied(doc, claimableOneFilter("ev", D, now, started), claimOneUpdate(D, "w9", now, 30, started));
        expect(claim.matched).toBe(applies);
        if (applies) expect(deliveryOfDoc(claim.doc, D)).toEqual(claimedDelivery(mine, "w9", now, 30));
        const through = applied(doc, claimableOneFilter("ev", D, now, started), claimOneUpdate(D, "w9", now, 30, started, true));
        if (applies) expect(deliveryOfDoc(through.doc, D)).toEqual(letThroughClaim(mine, "w9", now, 30));
        expect(deliveryOfDoc(claim.doc, OTHER)).toEqual(other);

        const hold = applied(doc, claimableOneFilter("ev", D, now, started), holdOneUpdate(D, now, started));
        if (applies) expect(deliveryOfDoc(hold.doc, D)).toEqual(heldDelivery(mine));
        const move = applied(doc, claimableOneFilter("ev", D, now, started), moveOneUpdate(D, now, started, 99));
        if (applies) expect(deliveryOfDoc(move.doc, D)).toEqual({ ...mine, nextAttemptAt: 99 });
      }),
      { numRuns: 400 },
    );
  });

  it("holds every waiting delivery of the destination, not one in flight, not another destination's", () => {
    fc.assert(
      fc.property(progress, progress, fc.integer({ min: 0, max: 25 }), (mine, other, now) => {
        const { doc, matched } = applied(eventDoc(mine, other), waitingFilter(D, now), holdWaitingUpdate(D, now));
        // The outbox's condition (outboxAt) is the summary's: a waiting delivery has one.
        const waiting = waitingAt(mine, now);
        expect(deliveryOfDoc(doc, D)).toEqual(waiting ? heldDelivery(mine) : mine);
        expect(deliveryOfDoc(doc, OTHER)).toEqual(other);
        if (!waiting) expect(matched).toBe(false);
      }),
      { numRuns: 400 },
    );
  });

  it("probes and releases a held delivery only", () => {
    fc.assert(
      fc.property(progress, progress, (mine, other) => {
        const doc = eventDoc(mine, other);
        const held = mine.state === "held";
        expect(new Query(heldFilter(D)).test(doc)).toBe(held);
        const probe = applied(doc, heldOneFilter("ev", D), probeOneUpdate(D, "w3", 50, 30));
        expect(probe.matched).toBe(held);
        if (held) expect(deliveryOfDoc(probe.doc, D)).toEqual(probedDelivery(mine, "w3", 50, 30));
        const release = applied(doc, heldOneFilter("ev", D), releaseOneUpdate(D, 77));
        if (held) expect(deliveryOfDoc(release.doc, D)).toEqual(releasedDelivery(mine, 77));
        expect(deliveryOfDoc(release.doc, OTHER)).toEqual(other);
      }),
      { numRuns: 300 },
    );
  });

  it("finds candidates with a claimable delivery to a destination not left out", () => {
    fc.assert(
      fc.property(progress, progress, fc.integer({ min: 0, max: 25 }), fc.boolean(), (mine, other, now, busy) => {
        const docs = [eventDoc(mine, other)];
        const expected = (isClaimable(mine, now) && !busy) || isClaimable(other, now);
        expect(new Query(candidatesFilter(now, busy ? [D] : [])).find(docs).all().length).toBe(expected ? 1 : 0);
      }),
      { numRuns: 300 },
    );
  });
});

/** Just enough of a MongoDB collection for delivery control, answered by mingo over an array. */
function fakeCollection(docs: AnyDoc[] = []) {
  const find = (filter: Doc) => new Query(filter).find<AnyDoc>(docs).all();
  const cursor = (rows: AnyDoc[]) => {
    let out = rows;
    const c = {
      sort(order: Record<string, 1 | -1>) {
        const [[key, dir]] = Object.entries(order) as [[string, 1 | -1]];
        out = [...out].sort((a, b) => (a[key] < b[key] ? -dir : a[key] > b[key] ? dir : 0));
        return c;
      },
      limit(n: number) {
        out = out.slice(0, n);
        return c;
      },
      toArray: async () => out.map((d) => structuredClone(d)),
      next: async () => (out[0] ? structuredClone(out[0]) : null),
    };
    return c;
  };
  // mingo may put a new object in the array's place: the array is the collection.
  const update = (target: AnyDoc, u: Doc | Doc[]) => updateMany(docs, { _id: target._id }, u as never);
  return {
    docs,
    findOne: async (filter: Doc) => (find(filter)[0] ? structuredClone(find(filter)[0]!) : null),
    find: (filter: Doc) => cursor(find(filter)),
    countDocuments: async (filter: Doc) => find(filter).length,
    insertOne: async (doc: AnyDoc) => {
      if (docs.some((d) => d._id === doc._id)) throw Object.assign(new Error("duplicate key"), { code: 11000 });
      docs.push(structuredClone(doc));
    },
    replaceOne: async (filter: Doc, doc: AnyDoc) => {
      const i = docs.findIndex((d) => new Query(filter).test(d));
      if (i >= 0) docs[i] = structuredClone(doc);
      return { matchedCount: i >= 0 ? 1 : 0 };
    },
    deleteOne: async (filter: Doc) => {
      const i = docs.findIndex((d) => new Query(filter).test(d));
      if (i >= 0) docs.splice(i, 1);
    },
    updateOne: async (filter: Doc, u: Doc[]) => {
      const [target] = find(filter);
      if (target) update(target, u);
      return { modifiedCount: target ? 1 : 0 };
    },
    updateMany: async (filter: Doc, u: Doc[]) => {
      const targets = find(filter);
      for (const t of targets) update(t, u);
      return { modifiedCount: targets.length };
    },
    findOneAndUpdate: async (filter: Doc, u: Doc | Doc[]) => {
      const [target] = find(filter);
      if (!target) return null;
      update(target, u);
      return structuredClone(docs.find((d) => d._id === target._id)!);
    },
  };
}

describe("delivery control's flow over MongoDB documents (mingo)", () => {
  const worker = (owner: string, state: "pending" | "delivered" | "exhausted", nextAttemptAt?: number) => ({ kind: "worker" as const, owner, state, nextAttemptAt });

  function setup(destination: Record<string, unknown>, count: number) {
    const destinationId = randomUUID();
    const endpoints = fakeCollection([
      { _id: "ep", accountId: "acct", forwardJson: JSON.stringify([{ id: destinationId, name: "billing", url: "https://x.test/", keepPath: true, timeoutMs: 1000, maxAttempts: 6, ...destination }]) },
    ]);
    // Event ids sort as they were made (UUIDv7 in the store).
    const pending = { ...NEVER_FORWARDED, state: "pending" as const, target: "t" };
    const events = fakeCollection(
      Array.from({ length: count }, (_, i) => ({
        _id: `ev-${String(i).padStart(3, "0")}`,
        accountId: "acct",
        endpointId: "ep",
        outboxAt: 1000 + i,
        deliveries: [deliveryToDoc(destinationId, { ...pending, nextAttemptAt: 1000 + i }, [])],
      })),
    );
    const breakers = fakeCollection();
    const control = createMongoDeliveryControl({ events, endpoints, breakers } as never);
    const ref = (i: number) => ({ accountId: "acct", endpointId: "ep", eventId: `ev-${String(i).padStart(3, "0")}`, destinationId });
    const state = (i: number) => deliveryOfDoc(events.docs[i]!, destinationId);
    // outboxAt as the store's SUMMARIZE keeps it: the pipelines set it on every change.
    async function record(i: number, owner: string, status: number, transition: ReturnType<typeof worker>, now: number) {
      const attempt = forwardAttemptFixture(state(i).started, { status });
      const r = await control.recording(ref(i), attempt, transition, now);
      await events.updateOne({ _id: ref(i).eventId }, recordUpdate(ref(i), attempt, r.transition));
      return r.after();
    }
    return { control, events, endpoints, breakers: breakers as unknown as { docs: BreakerDoc[] }, state, record, destinationId, ref };
  }

  it("spaces claims by the rate limit, moving the others to their turns", async () => {
    const s = setup({ rateLimit: { perSecond: 5 } }, 4);
    const first = await s.control.claim("w1", 2000, 30_000, 50);
    expect(first.claims.map((c) => [c.eventId, c.sendAfterMs])).toEqual([["ev-000", PACED_SEND_DELAY_MS]]);
    expect(first.limiterWaits).toBe(3);
    expect([1, 2, 3].map((i) => s.state(i).nextAttemptAt)).toEqual([2200, 2400, 2600]);
    expect((await s.control.claim("w2", 2100, 30_000, 50)).claims).toEqual([]);
    expect((await s.control.claim("w2", 2200, 30_000, 50)).claims.map((c) => c.eventId)).toEqual(["ev-001"]);
  });

  it("keeps `concurrency` in flight with tokens on the breaker; a record gives its slot back", async () => {
    const s = setup({ rateLimit: { concurrency: 1 } }, 3);
    const first = await s.control.claim("w1", 2000, 30_000, 50);
    expect(first.claims.map((c) => c.eventId)).toEqual(["ev-000"]);
    expect((await s.control.claim("w2", 2001, 30_000, 50)).claims).toEqual([]);
    await s.record(0, "w1", 200, worker("w1", "delivered"), 2002);
    expect((await s.control.claim("w2", 2003, 30_000, 50)).claims.map((c) => c.eventId)).toEqual(["ev-001"]);
  });

  it("opens, holds, probes once, re-opens, then closes and releases the held oldest first", async () => {
    const s = setup({ breaker: { failures: 2, probeAfterMs: 5000 } }, 4);
    const { claims } = await s.control.claim("w1", 2000, 30_000, 2);
    expect(claims).toHaveLength(2);
    expect(await s.record(0, "w1", 503, worker("w1", "pending", 9000), 2001)).toBeUndefined();
    const opened = await s.record(1, "w1", 503, worker("w1", "pending", 9000), 2002);
    expect(opened).toMatchObject({ change: "opened", breaker: { state: "open", held: 4, nextProbeAt: 7002 } });
    expect([0, 1, 2, 3].map((i) => s.state(i).state)).toEqual(["held", "held", "held", "held"]);
    expect((await s.control.claim("w1", 7001, 30_000, 50)).claims).toEqual([]);

    const probe = await s.control.claim("w1", 7002, 30_000, 50);
    expect(probe.claims.map((c) => [c.eventId, c.attempt])).toEqual([["ev-000", 2]]);
    expect((await s.control.claim("w2", 7003, 30_000, 50)).claims).toEqual([]);
    expect(await s.record(0, "w1", 503, worker("w1", "pending", 9000), 7010)).toBeUndefined();
    expect(s.state(0)).toMatchObject({ state: "held", spared: 1 });
    expect(s.breakers.docs[0]).toMatchObject({ state: "open", probeDelayMs: 10_000, nextProbeAt: 17_010 });

    const again = await s.control.claim("w2", 17_010, 30_000, 50);
    expect(again.claims).toEqual([{ ...s.ref(0), attempt: 3, counted: 2 }]);
    const closed = await s.record(0, "w2", 200, worker("w2", "delivered"), 17_100);
    expect(closed).toMatchObject({ change: "closed", breaker: { state: "closed", held: 2 } });
    // Drained one at a time, oldest first, 100 ms apart: the next once the one before settled.
    expect([1, 2, 3].map((i) => [s.state(i).state, s.state(i).nextAttemptAt])).toEqual([
      ["pending", 17_200],
      ["held", undefined],
      ["held", undefined],
    ]);
    for (const [i, at] of [
      [1, 17_200],
      [2, 17_300],
      [3, 17_400],
    ] as const) {
      const { claims } = await s.control.claim("w1", at, 30_000, 50);
      expect(claims.map((c) => c.eventId)).toEqual([`ev-00${i}`]);
      await s.record(i, "w1", 200, worker("w1", "delivered"), at + 10);
    }
    expect(s.breakers.docs[0]).toMatchObject({ state: "closed", holding: false });
  });

  it("holds a paused destination's deliveries at claim and settle, and releases them once resumed", async () => {
    const s = setup({ paused: true }, 2);
    expect((await s.control.claim("w1", 2000, 30_000, 50)).claims).toEqual([]);
    expect([0, 1].map((i) => s.state(i).state)).toEqual(["held", "held"]);
    expect(await s.control.breakers(["ep"])).toMatchObject([{ state: "closed", holding: true, held: 2 }]);
    const ep = s.endpoints.docs[0]!;
    ep.forwardJson = (ep.forwardJson as string).replace('"paused":true', '"paused":false');
    await s.control.settle("ep", 3000);
    expect([0, 1].map((i) => [s.state(i).state, s.state(i).nextAttemptAt])).toEqual([
      ["pending", 3000],
      ["held", undefined],
    ]);
    const [first] = (await s.control.claim("w1", 3000, 30_000, 50)).claims;
    expect(first?.eventId).toBe("ev-000");
    await s.record(0, "w1", 200, worker("w1", "delivered"), 3010);
    expect([s.state(1).state, s.state(1).nextAttemptAt]).toEqual(["pending", 3100]);
    const [second] = (await s.control.claim("w1", 3100, 30_000, 50)).claims;
    await s.record(1, "w1", 200, worker("w1", "delivered"), second ? 3110 : 0);
    expect(await s.control.breakers(["ep"])).toMatchObject([{ holding: false, held: 0 }]);
  });
});
