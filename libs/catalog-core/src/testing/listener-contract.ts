import { describe, it, expect } from "vitest";
import type { CatalogStore } from "../ports.js";
import type { ListenerRecord } from "../types.js";
import { newId } from "../ids.js";
import type { ContractContext } from "./endpoint-contract.js";
import { eventFixture } from "./fixtures.js";

const T0 = 1_900_000_000_000;

function listener(endpoint: { id: string; accountId: string }, overrides: Partial<ListenerRecord> = {}): ListenerRecord {
  return {
    id: newId(),
    accountId: endpoint.accountId,
    endpointId: endpoint.id,
    host: "laptop.local",
    startedAt: T0,
    lastSeenAt: T0,
    expiresAt: T0 + 30_000,
    lagEvents: 0,
    lagRunSince: T0,
    ...overrides,
  };
}

/**
 * Listener liveness (design §19; ADR 0062): saves and lists listeners with their expiry and the
 * per-endpoint limit (also across two stores where the adapter opens one), and counts a
 * listener's lag.
 */
export function listenerContract(ctx: ContractContext, openAnother?: () => Promise<CatalogStore>): void {
  describe("listeners", () => {
    it("saves a listener, replaces it at its next heartbeat, and lists it while it lives", async () => {
      const { endpoint } = await ctx.accountWithEndpoint();
      const first = listener(endpoint, { cursor: { receivedAt: T0 - 5, id: newId() }, lagEvents: 3, lastError: "connection_refused" });
      expect(await ctx.store().putListener(first, 20, T0)).toBe(true);
      expect(await ctx.store().listListeners(endpoint.accountId, endpoint.id, T0 + 1)).toEqual([first]);

      const beat = { ...first, lastSeenAt: T0 + 10_000, expiresAt: T0 + 40_000, cursor: undefined, lagEvents: 0, lastError: undefined };
      expect(await ctx.store().putListener(beat, 20, T0 + 10_000)).toBe(true);
      expect(await ctx.store().listListeners(endpoint.accountId, endpoint.id, T0 + 39_999)).toEqual([beat]);
      expect(await ctx.store().listListeners(endpoint.accountId, endpoint.id, T0 + 40_000)).toEqual([]);
    });

    it("lists oldest first, one endpoint's and one account's only", async () => {
      const { accountId, endpoint } = await ctx.accountWithEndpoint();
      const other = await ctx.accountWithEndpoint();
      const later = listener(endpoint, { startedAt: T0 + 5 });
      const earlier = listener(endpoint, { startedAt: T0 - 5 });
      for (const l of [later, earlier, listener(other.endpoint)]) expect(await ctx.store().putListener(l, 20, T0)).toBe(true);
      expect((await ctx.store().listListeners(accountId, endpoint.id, T0)).map((l) => l.id)).toEqual([earlier.id, later.id]);
      expect(await ctx.store().listListeners(other.accountId, endpoint.id, T0)).toEqual([]);
      expect(await ctx.store().deleteListener(other.accountId, endpoint.id, later.id)).toBe(false);
      expect(await ctx.store().deleteListener(accountId, endpoint.id, later.id)).toBe(true);
      expect(await ctx.store().deleteListener(accountId, endpoint.id, later.id)).toBe(false);
      expect((await ctx.store().listListeners(accountId, endpoint.id, T0)).map((l) => l.id)).toEqual([earlier.id]);
    });

    it("admits at most the limit of live listeners per endpoint; those heartbeating stay, an expired one makes room", async () => {
      const { accountId, endpoint } = await ctx.accountWithEndpoint();
      const other = await ctx.accountWithEndpoint();
      const a = listener(endpoint, { expiresAt: T0 + 10_000 });
      const b = listener(endpoint);
      expect(await ctx.store().putListener(a, 2, T0)).toBe(true);
      expect(await ctx.store().putListener(b, 2, T0)).toBe(true);
      const c = listener(endpoint);
      expect(await ctx.store().putListener(c, 2, T0 + 1)).toBe(false);
      expect(await ctx.store().putListener({ ...b, lastSeenAt: T0 + 1 }, 2, T0 + 1)).toBe(true);
      // Another endpoint is not charged for this one's listeners.
      expect(await ctx.store().putListener(listener(other.endpoint), 2, T0 + 1)).toBe(true);
      expect((await ctx.store().listListeners(accountId, endpoint.id, T0 + 1)).map((l) => l.id).sort()).toEqual([a.id, b.id].sort());
      // a's lifetime ends at T0 + 10 s: then c fits.
      expect(await ctx.store().putListener({ ...c, lastSeenAt: T0 + 10_000, expiresAt: T0 + 40_000 }, 2, T0 + 10_000)).toBe(true);
      expect((await ctx.store().listListeners(accountId, endpoint.id, T0 + 10_000)).map((l) => l.id).sort()).toEqual([b.id, c.id].sort());
    });

    it("holds the limit across two stores on the same data saving new listeners at once", async (test) => {
      if (!openAnother) return test.skip();
      const second = await openAnother();
      try {
        const { accountId, endpoint } = await ctx.accountWithEndpoint();
        const stores = [ctx.store(), second];
        const saved = await Promise.all(Array.from({ length: 16 }, (_, i) => stores[i % 2]!.putListener(listener(endpoint), 5, T0)));
        expect(saved.filter(Boolean)).toHaveLength(5);
        expect(await second.listListeners(accountId, endpoint.id, T0)).toHaveLength(5);
      } finally {
        await second.close();
      }
    });

    it("counts the endpoint's events after a cursor in (receivedAt, id) order, up to the bound", async () => {
      const { accountId, endpoint } = await ctx.accountWithEndpoint();
      const other = await ctx.accountWithEndpoint();
      const at = 1_950_000_000_000;
      const stamps = await ctx.store().appendEvents(
        Array.from({ length: 6 }, () => eventFixture(endpoint)),
        () => at,
      );
      await ctx.store().appendEvents([eventFixture(other.endpoint)], () => at);
      const [first, second] = stamps.map((s) => ({ receivedAt: s!.receivedAt, id: s!.id }));
      const count = (after: { receivedAt: number; id: string }, limit = 100) => ctx.store().countEventsAfter(accountId, endpoint.id, after, limit);
      expect(await count({ receivedAt: 0, id: "00000000-0000-0000-0000-000000000000" })).toBe(6);
      expect(await count(first!)).toBe(5);
      expect(await count(second!)).toBe(4);
      expect(await count(first!, 3)).toBe(3);
      expect(await count({ receivedAt: stamps.at(-1)!.receivedAt, id: stamps.at(-1)!.id })).toBe(0);
      expect(await ctx.store().countEventsAfter(other.accountId, endpoint.id, { receivedAt: 0, id: "00000000-0000-0000-0000-000000000000" }, 100)).toBe(0);
    });
  });
}
