import { describe, it, expect } from "vitest";
import { AppError } from "@whc/errors";
import type { CatalogStore } from "../ports.js";
import type { EndpointRecord } from "../types.js";
import type { ContractContext } from "./endpoint-contract.js";
import { endpointFixture } from "./fixtures.js";

/** Every page of the account's endpoints, `limit` at a time, following the last id of each. */
async function walkPages(store: CatalogStore, accountId: string, limit: number, after?: string): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor = after;
  for (;;) {
    const page = await store.listEndpoints(accountId, { after: cursor, limit });
    expect(page.length).toBeLessThanOrEqual(limit);
    if (page.length === 0) return pages;
    pages.push(page.map((e) => e.id));
    cursor = page.at(-1)!.id;
  }
}

async function createMany(store: CatalogStore, accountId: string, count: number): Promise<EndpointRecord[]> {
  const created: EndpointRecord[] = [];
  // One at a time: ids are UUIDv7, so creation order is id order.
  for (let i = 0; i < count; i += 1) created.push(await store.createEndpoint(endpointFixture(accountId)));
  return created;
}

function isQuotaRefusal(e: unknown, limit: number): boolean {
  return AppError.is(e) && e.reason === "quota_exceeded" && e.meta.quota === "endpoints" && Number(e.meta.limit) === limit;
}

/** listEndpoints' pages: by id, each endpoint once, from any id on, one account only. */
export function endpointListContract(ctx: ContractContext): void {
  describe("endpoint pages", () => {
    it("lists by id ascending, every endpoint exactly once over the pages, whatever the page size", async () => {
      const { accountId, endpoint: first } = await ctx.accountWithEndpoint();
      const other = await ctx.accountWithEndpoint();
      const created = [first, ...(await createMany(ctx.store(), accountId, 24))];
      await createMany(ctx.store(), other.accountId, 3);
      const ids = created.map((e) => e.id);
      expect([...ids].sort()).toEqual(ids);
      expect((await ctx.store().listEndpoints(accountId)).map((e) => e.id)).toEqual(ids);
      for (const limit of [1, 7, 25, 100]) {
        const pages = await walkPages(ctx.store(), accountId, limit);
        expect(pages.flat(), `limit ${limit}`).toEqual(ids);
        expect(pages.length).toBe(Math.ceil(ids.length / limit));
      }
    });

    it("goes on after an id that is gone, and after any id at all", async () => {
      const { accountId, endpoint: first } = await ctx.accountWithEndpoint();
      const [a, b, c, d] = await createMany(ctx.store(), accountId, 4);
      expect(await ctx.store().deleteEndpoint(accountId, b!.id)).toBe(true);
      const page = await ctx.store().listEndpoints(accountId, { after: b!.id, limit: 2 });
      expect(page.map((e) => e.id)).toEqual([c!.id, d!.id]);
      expect((await ctx.store().listEndpoints(accountId, { after: "00000000-0000-0000-0000-000000000000", limit: 2 })).map((e) => e.id)).toEqual([
        first.id,
        a!.id,
      ]);
      expect(await ctx.store().listEndpoints(accountId, { after: "ffffffff-ffff-ffff-ffff-ffffffffffff", limit: 2 })).toEqual([]);
      expect(await ctx.store().listEndpoints(accountId, { after: d!.id, limit: 2 })).toEqual([]);
    });

    it("pages another account's endpoints never, even after one of its ids", async () => {
      const a = await ctx.accountWithEndpoint();
      const b = await ctx.accountWithEndpoint();
      expect((await ctx.store().listEndpoints(b.accountId, { limit: 10 })).map((e) => e.id)).toEqual([b.endpoint.id]);
      // a's endpoint was created first: its id is below b's, and b's page after it is b's alone.
      expect((await ctx.store().listEndpoints(b.accountId, { after: a.endpoint.id, limit: 10 })).map((e) => e.id)).toEqual([b.endpoint.id]);
      expect(await ctx.store().listEndpoints(b.accountId, { after: b.endpoint.id, limit: 10 })).toEqual([]);
    });
  });
}

/**
 * createEndpoint's quota: counted per account, decided with the insert, so concurrent creates
 * (in one store, and through a second store on the same data where the adapter can open one,
 * as another catalog process would) never leave an account with more than the quota.
 */
export function endpointQuotaContract(ctx: ContractContext, openAnother?: () => Promise<CatalogStore>): void {
  describe("endpoint quota", () => {
    it("refuses a create once the account has the quota's endpoints, counting only its own, and again after a delete", async () => {
      const { accountId, endpoint } = await ctx.accountWithEndpoint();
      const other = await ctx.accountWithEndpoint();
      await ctx.store().createEndpoint(endpointFixture(accountId), 3);
      await ctx.store().createEndpoint(endpointFixture(accountId), 3);
      const refused = await ctx.store().createEndpoint(endpointFixture(accountId), 3).catch((e: unknown) => e);
      expect(isQuotaRefusal(refused, 3), String(refused)).toBe(true);
      expect(await ctx.store().listEndpoints(accountId)).toHaveLength(3);
      // Another account is not charged for this one's endpoints.
      await expect(ctx.store().createEndpoint(endpointFixture(other.accountId), 3)).resolves.toMatchObject({ accountId: other.accountId });
      // Without a quota (bootstrap, tests) nothing is counted.
      await expect(ctx.store().createEndpoint(endpointFixture(accountId))).resolves.toBeDefined();
      expect(await ctx.store().deleteEndpoint(accountId, endpoint.id)).toBe(true);
      const more = await ctx.store().createEndpoint(endpointFixture(accountId), 5);
      expect(more.accountId).toBe(accountId);
    });

    it("lets exactly the quota's worth of concurrent creates through", async () => {
      const { accountId } = await ctx.accountWithEndpoint();
      const results = await Promise.allSettled(Array.from({ length: 24 }, () => ctx.store().createEndpoint(endpointFixture(accountId), 9)));
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(8);
      for (const r of results) if (r.status === "rejected") expect(isQuotaRefusal(r.reason, 9), String(r.reason)).toBe(true);
      expect(await ctx.store().listEndpoints(accountId)).toHaveLength(9);
    });

    it("holds the quota across two stores on the same data creating at once", async (test) => {
      if (!openAnother) return test.skip();
      const second = await openAnother();
      try {
        const { accountId } = await ctx.accountWithEndpoint();
        const stores = [ctx.store(), second];
        const results = await Promise.allSettled(
          Array.from({ length: 30 }, (_, i) => stores[i % 2]!.createEndpoint(endpointFixture(accountId), 12)),
        );
        expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(11);
        for (const r of results) if (r.status === "rejected") expect(isQuotaRefusal(r.reason, 12), String(r.reason)).toBe(true);
        expect(await second.listEndpoints(accountId)).toHaveLength(12);
      } finally {
        await second.close();
      }
    });
  });
}
