import { describe, it, expect } from "vitest";
import { createHash } from "node:crypto";
import type { CatalogStore } from "../ports.js";
import type { EndpointRecord, NewEvent } from "../types.js";
import type { ContractContext } from "./endpoint-contract.js";
import { endpointFixture, eventFixture } from "./fixtures.js";

const SETTINGS = '{"windowSeconds":3600,"key":"auto"}';
const WINDOW_MS = 60_000;
const DESTINATION = "01a20000-0000-7000-8000-0000000000d1";

/** A stand-in for ingest's keyed hash of a capture's key (the store treats it as opaque bytes). */
const hashOf = (key: string) => createHash("sha256").update(`dedupe:${key}`).digest();

/** A relay capture with one delivery, carrying a dedupe key. */
function keyed(endpoint: Pick<EndpointRecord, "id" | "accountId">, key: string, windowMs = WINDOW_MS, overrides: Partial<NewEvent> = {}): NewEvent {
  return eventFixture(endpoint, {
    forward: { scheduled: true, deliveries: [{ destinationId: DESTINATION, target: "sealed-target" }] },
    dedupe: { keyHash: hashOf(key), windowMs },
    ...overrides,
  });
}

/** A clock that reads `at` (and moves it on by a millisecond each reading, as time would). */
function clockAt(start: number) {
  let at = start;
  const clock = () => at++;
  return Object.assign(clock, { set: (t: number) => (at = t) });
}

/**
 * Deduplication in the append (design §17, ADR 0083): the first capture with a key is kept, a
 * later one within the window is stored as its duplicate with its deliveries `duplicate` (never
 * claimed), one after the window starts a new window; keys belong to one endpoint; a key outlives
 * its first event (a retry after the first was deleted is still not forwarded again), goes with
 * its endpoint, and is purged once expired.
 */
export function dedupeContract(ctx: ContractContext, another?: () => Promise<CatalogStore>): void {
  describe("deduplication", () => {
    it("keeps an endpoint's settings from its create, replaces them on update and removes them with ''", async () => {
      const { accountId } = await ctx.accountWithEndpoint();
      const created = await ctx.store().createEndpoint(endpointFixture(accountId, { dedupeJson: SETTINGS }));
      expect(created.dedupeJson).toBe(SETTINGS);
      const { dedupeJson: _d, ...bare } = endpointFixture(accountId);
      expect((await ctx.store().createEndpoint(bare)).dedupeJson).toBe("");
      const fields = '{"windowSeconds":600,"fields":["header.x-request-id","body.id"]}';
      expect((await ctx.store().updateEndpoint(accountId, created.id, { dedupeJson: fields }, created.updatedAt + 1))?.dedupeJson).toBe(fields);
      expect((await ctx.store().updateEndpoint(accountId, created.id, { displayName: "x" }, created.updatedAt + 2))?.dedupeJson).toBe(fields);
      expect((await ctx.store().updateEndpoint(accountId, created.id, { dedupeJson: "" }, created.updatedAt + 3))?.dedupeJson).toBe("");
    });

    it("keeps the first; a second within the window is its duplicate, stored, its deliveries duplicate and never claimed", async () => {
      const { accountId, endpoint } = await ctx.accountWithEndpoint();
      const clock = clockAt(Date.now());
      const [first] = await ctx.store().appendEvents([keyed(endpoint, "evt_1")], clock);
      clock.set(first!.receivedAt + WINDOW_MS - 10);
      const [second] = await ctx.store().appendEvents([keyed(endpoint, "evt_1")], clock);
      expect(first!.duplicateOf).toBeUndefined();
      expect(second!.duplicateOf).toBe(first!.id);
      expect(second!.responseCode).toBe(200);

      const stored = await ctx.store().getEvent(accountId, endpoint.id, second!.id);
      expect(stored?.duplicateOf).toBe(first!.id);
      expect(stored?.deliveries.map((d) => [d.destinationId, d.state, d.nextAttemptAt])).toEqual([[DESTINATION, "duplicate", undefined]]);
      expect((await ctx.store().getEvent(accountId, endpoint.id, first!.id))?.duplicateOf).toBeUndefined();

      const page = await ctx.store().listEvents({ accountId, endpointId: endpoint.id, limit: 50 });
      expect(page.events.map((e) => [e.id, e.duplicateOf, e.forwardState])).toEqual([
        [second!.id, first!.id, "duplicate"],
        [first!.id, undefined, "pending"],
      ]);
      // Only the first's delivery is in the outbox.
      const { claims } = await ctx.store().claimDeliveries("worker", clock() + 1, 30_000, 10);
      expect(claims.map((c) => c.eventId)).toEqual([first!.id]);
      // Nor later: once the first's claim has ended, it alone is claimable again.
      expect((await ctx.store().claimDeliveries("another", clock() + 60_000, 30_000, 10)).claims.map((c) => c.eventId)).toEqual([first!.id]);
    });

    it("decides within one batch in stamp order: the first of the batch is kept", async () => {
      const { endpoint } = await ctx.accountWithEndpoint();
      const results = await ctx.store().appendEvents([keyed(endpoint, "a"), keyed(endpoint, "b"), keyed(endpoint, "a"), keyed(endpoint, "a")], ctx.clock());
      expect(results.map((r) => r?.duplicateOf)).toEqual([undefined, undefined, results[0]!.id, results[0]!.id]);
    });

    it("after the window a capture is new again, and starts a new window", async () => {
      const { accountId, endpoint } = await ctx.accountWithEndpoint();
      const clock = clockAt(Date.now());
      const [first] = await ctx.store().appendEvents([keyed(endpoint, "evt_2")], clock);
      clock.set(first!.receivedAt + WINDOW_MS);
      const [renewed] = await ctx.store().appendEvents([keyed(endpoint, "evt_2")], clock);
      expect(renewed!.duplicateOf).toBeUndefined();
      clock.set(renewed!.receivedAt + 1000);
      const [again] = await ctx.store().appendEvents([keyed(endpoint, "evt_2")], clock);
      expect(again!.duplicateOf).toBe(renewed!.id);
      const duplicates = await ctx.store().listEvents({ accountId, endpointId: endpoint.id, limit: 50, duplicate: true });
      expect(duplicates.events.map((e) => e.id)).toEqual([again!.id]);
      const originals = await ctx.store().listEvents({ accountId, endpointId: endpoint.id, limit: 50, duplicate: false });
      expect(originals.events.map((e) => e.id)).toEqual([renewed!.id, first!.id]);
    });

    it("never matches across endpoints, across keys, or a capture without a key", async () => {
      const a = await ctx.accountWithEndpoint();
      const b = await ctx.accountWithEndpoint();
      const [inA] = await ctx.store().appendEvents([keyed(a.endpoint, "shared")], ctx.clock());
      const [inB] = await ctx.store().appendEvents([keyed(b.endpoint, "shared")], ctx.clock());
      const [otherKey] = await ctx.store().appendEvents([keyed(a.endpoint, "another")], ctx.clock());
      const [unkeyed] = await ctx.store().appendEvents([eventFixture(a.endpoint)], ctx.clock());
      expect([inA, inB, otherKey, unkeyed].map((r) => r!.duplicateOf)).toEqual([undefined, undefined, undefined, undefined]);
      expect((await ctx.store().appendEvents([keyed(b.endpoint, "shared")], ctx.clock()))[0]!.duplicateOf).toBe(inB!.id);
      expect(await ctx.store().countDedupeKeys(a.endpoint.id)).toBe(2);
      expect(await ctx.store().countDedupeKeys(b.endpoint.id)).toBe(1);
    });

    it("keeps a key when its first event is deleted: a retry within the window is still a duplicate (of the deleted id)", async () => {
      const { accountId, endpoint } = await ctx.accountWithEndpoint();
      const [first] = await ctx.store().appendEvents([keyed(endpoint, "evt_3")], ctx.clock());
      expect(await ctx.store().deleteEvent(accountId, endpoint.id, first!.id)).toBe(true);
      const [retry] = await ctx.store().appendEvents([keyed(endpoint, "evt_3")], ctx.clock());
      expect(retry!.duplicateOf).toBe(first!.id);
      expect((await ctx.store().getEvent(accountId, endpoint.id, retry!.id))?.deliveries[0]?.state).toBe("duplicate");
    });

    it("removes an endpoint's keys with it, and purges keys whose window ended", async () => {
      const a = await ctx.accountWithEndpoint();
      const b = await ctx.accountWithEndpoint();
      const clock = clockAt(Date.now());
      const [short] = await ctx.store().appendEvents([keyed(b.endpoint, "short", 1000)], clock);
      const [long] = await ctx.store().appendEvents([keyed(b.endpoint, "long", 10 * WINDOW_MS)], clock);
      await ctx.store().appendEvents([keyed(a.endpoint, "x"), keyed(a.endpoint, "y")], clock);
      expect(await ctx.store().countDedupeKeys(a.endpoint.id)).toBe(2);
      expect(await ctx.store().deleteEndpoint(a.accountId, a.endpoint.id)).toBe(true);
      expect(await ctx.store().countDedupeKeys(a.endpoint.id)).toBe(0);

      // Purged when its window ended by `now`: events older than `before` only go by retention.
      expect(await ctx.store().purgeEvents(0, short!.receivedAt + 999)).toBe(0);
      expect(await ctx.store().countDedupeKeys(b.endpoint.id)).toBe(2);
      await ctx.store().purgeEvents(0, short!.receivedAt + 1000);
      expect(await ctx.store().countDedupeKeys(b.endpoint.id)).toBe(1);
      // The long key still holds after the purge.
      clock.set(long!.receivedAt + 5000);
      expect((await ctx.store().appendEvents([keyed(b.endpoint, "long")], clock))[0]!.duplicateOf).toBe(long!.id);
      expect((await ctx.store().appendEvents([keyed(b.endpoint, "short")], clock))[0]!.duplicateOf).toBeUndefined();
    });

    it("keeps keys and duplicateOf across a restart", async () => {
      if (!ctx.reopen) return;
      const { accountId, endpoint } = await ctx.accountWithEndpoint();
      const [first] = await ctx.store().appendEvents([keyed(endpoint, "evt_4")], ctx.clock());
      const [second] = await ctx.store().appendEvents([keyed(endpoint, "evt_4")], ctx.clock());
      await ctx.reopen();
      expect((await ctx.store().getEvent(accountId, endpoint.id, second!.id))?.duplicateOf).toBe(first!.id);
      expect((await ctx.store().appendEvents([keyed(endpoint, "evt_4")], ctx.clock()))[0]!.duplicateOf).toBe(first!.id);
    });

    it("agrees across two stores appending the same key at once: exactly one original", async () => {
      if (!another) return;
      const { endpoint } = await ctx.accountWithEndpoint();
      const second = await another();
      try {
        for (let round = 0; round < 5; round += 1) {
          const key = `concurrent-${round}`;
          const results = (
            await Promise.all([
              ctx.store().appendEvents([keyed(endpoint, key)], ctx.clock()),
              second.appendEvents([keyed(endpoint, key)], ctx.clock()),
              ctx.store().appendEvents([keyed(endpoint, key)], ctx.clock()),
              second.appendEvents([keyed(endpoint, key)], ctx.clock()),
            ])
          ).flat();
          const originals = results.filter((r) => r!.duplicateOf === undefined);
          expect(originals).toHaveLength(1);
          for (const r of results) if (r !== originals[0]) expect(r!.duplicateOf).toBe(originals[0]!.id);
        }
      } finally {
        await second.close();
      }
    });
  });
}
