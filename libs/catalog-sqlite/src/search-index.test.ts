import Database from "better-sqlite3";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CatalogStore, EventQuery } from "@whc/catalog-core";
import { endpointFixture, eventFixture, keyHash, listAllPages, token } from "@whc/catalog-core/testing";
import { tempDir } from "@whc/testing";
import path from "node:path";
import { openSqliteStore, type SqliteStoreOptions } from "./sqlite-store.js";

/** What the file holds: captures still pending for the index, and the index's rows. */
function inFile(file: string): { pending: number; indexed: number[] } {
  const db = new Database(file, { readonly: true });
  try {
    const rows = db.prepare("SELECT entries FROM search_pending").pluck().all() as Buffer[];
    // Each entry: seq, endpoint key (8 bytes each), tokens' length (4), tokens.
    let pending = 0;
    for (const packed of rows) for (let at = 0; at < packed.length; at += 20 + packed.readUInt32LE(at + 16)) pending += 1;
    const indexed = (db.prepare("SELECT rowid FROM event_search_docsize ORDER BY rowid").pluck().all() as number[]).map(Number);
    return { pending, indexed };
  } finally {
    db.close();
  }
}

describe("the search index in runs", () => {
  let where: ReturnType<typeof tempDir>;
  let file: string;
  const stores: CatalogStore[] = [];
  const open = (searchIndex?: SqliteStoreOptions["searchIndex"]): CatalogStore => {
    const store = openSqliteStore({ file, searchIndex });
    stores.push(store);
    return store;
  };
  beforeEach(() => {
    where = tempDir("whc-search-index-");
    file = path.join(where.path, "catalog.db");
  });
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    where.remove();
  });

  async function endpointOf(store: CatalogStore) {
    const { key } = await store.ensureApiKey("search", keyHash("search"), "whc_search", Date.now());
    return store.createEndpoint(endpointFixture(key.accountId));
  }

  it("finds a capture from its commit on, before and after its run, paging across both like a brute-force filter", async () => {
    const vocabulary = ["alpha", "beta", "gamma", "delta"];
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.array(fc.subarray(vocabulary, { maxLength: 3 }), { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 7 }),
        fc.subarray(vocabulary, { minLength: 1, maxLength: 2 }),
        fc.integer({ min: 1, max: 3 }),
        fc.array(fc.nat(), { maxLength: 4 }),
        async (runEvery, batches, searched, limit, deletions) => {
          where.remove();
          where = tempDir("whc-search-index-");
          file = path.join(where.path, "catalog.db");
          // A run once `runEvery` captures wait: some are indexed, the latest pending.
          const store = openSqliteStore({ file, searchIndex: { batch: runEvery, inline: true } });
          try {
            const endpoint = await endpointOf(store);
            const other = await store.createEndpoint(endpointFixture(endpoint.accountId));
            const words = new Map<string, string[]>();
            for (const batch of batches) {
              const stamps = await store.appendEvents(batch.map((w) => eventFixture(endpoint, { words: w })), Date.now);
              stamps.forEach((st, i) => words.set(st!.id, batch[i]!));
              // Another endpoint's captures with the same words are never found in this one.
              await store.appendEvents([eventFixture(other, { words: vocabulary })], Date.now);
            }
            const ids = [...words.keys()];
            for (const d of deletions) {
              const id = ids[d % ids.length]!;
              if (words.delete(id)) await store.deleteEvent(endpoint.accountId, endpoint.id, id);
            }
            const expected = [...words.entries()].filter(([, w]) => searched.every((s) => w.includes(s))).map(([id]) => id).sort().reverse();
            const q = (extra: Partial<EventQuery>): EventQuery => ({
              accountId: endpoint.accountId,
              endpointId: endpoint.id,
              limit,
              searchTokens: searched.map(token),
              ...extra,
            });
            expect(await listAllPages(store, q({}))).toEqual(expected);
            if (expected.length > 1) {
              const oldest = (await store.getEvent(endpoint.accountId, endpoint.id, expected[expected.length - 1]!))!;
              const newer = await store.listEvents(q({ limit: 100, after: { receivedAt: oldest.receivedAt, id: oldest.id } }));
              expect(newer.events.map((e) => e.id)).toEqual(expected.slice(0, -1));
              expect(newer.hasOlder).toBe(true);
            }
          } finally {
            await store.close();
          }
        },
      ),
      { numRuns: 60 },
    );
  }, 60_000);

  it("indexes in runs of `batch`, leaves deleted captures out of the index, and a clean close leaves nothing pending", async () => {
    const store = open({ batch: 4, inline: true });
    const endpoint = await endpointOf(store);
    const append = (n: number) => store.appendEvents(Array.from({ length: n }, () => eventFixture(endpoint, { words: ["order"] })), Date.now);
    const first = await append(3);
    expect(inFile(file)).toEqual({ pending: 3, indexed: [] });
    await store.deleteEvent(endpoint.accountId, endpoint.id, first[1]!.id); // deleted while pending
    await append(1); // four waiting: a run
    expect(inFile(file).pending).toBe(0);
    const indexed = inFile(file).indexed;
    expect(indexed).toHaveLength(3);
    await append(2);
    expect(inFile(file)).toEqual({ pending: 2, indexed });
    const found = await store.listEvents({ accountId: endpoint.accountId, endpointId: endpoint.id, limit: 10, searchTokens: [token("order")] });
    expect(found.events).toHaveLength(5);
    await store.close();
    expect(inFile(file)).toMatchObject({ pending: 0 });
    expect(inFile(file).indexed).toHaveLength(5);
  });

  it("keeps the pending tail bounded when appends never let the thread turn (a bulk load in one go)", async () => {
    const store = open({ batch: 3 });
    const endpoint = await endpointOf(store);
    let most = 0;
    for (let i = 0; i < 40; i += 1) {
      // Awaiting the in-thread store resolves without a turn of the event loop: no timer or
      // immediate run gets in between.
      await store.appendEvents([eventFixture(endpoint, { words: ["bulk"] })], Date.now);
      most = Math.max(most, inFile(file).pending);
    }
    expect(most).toBe(11); // four batches' worth start a run inside the append that brings them
    expect(inFile(file).indexed.length + inFile(file).pending).toBe(40);
    const found = await store.listEvents({ accountId: endpoint.accountId, endpointId: endpoint.id, limit: 50, searchTokens: [token("bulk")] });
    expect(found.events).toHaveLength(40);
  });

  it("leaves fewer than `batch` captures pending, found all the same, and writes nothing while no append comes", async () => {
    const store = open({ batch: 1000 });
    const endpoint = await endpointOf(store);
    await store.appendEvents([eventFixture(endpoint, { words: ["quiet"] })], Date.now);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(inFile(file)).toEqual({ pending: 1, indexed: [] });
    const found = await store.listEvents({ accountId: endpoint.accountId, endpointId: endpoint.id, limit: 10, searchTokens: [token("quiet")] });
    expect(found.events).toHaveLength(1);
  });

  it("indexes what another process left pending once opened, once across the processes sharing the file", async () => {
    const writer = open({ batch: 1000 });
    const endpoint = await endpointOf(writer);
    for (let i = 0; i < 5; i += 1) await writer.appendEvents([eventFixture(endpoint, { words: ["left", `n${i}`] })], Date.now);
    expect(inFile(file).pending).toBe(5);
    // The second process (another connection to the file) finds five waiting, over its batch.
    open({ batch: 2 });
    await expect.poll(() => inFile(file).pending, { timeout: 2000, interval: 10 }).toBe(0);
    expect(inFile(file).indexed).toHaveLength(5);
    // The first one's search reads the index now, and finds each once.
    const found = await writer.listEvents({ accountId: endpoint.accountId, endpointId: endpoint.id, limit: 10, searchTokens: [token("left")] });
    expect(found.events).toHaveLength(5);
    const one = await writer.listEvents({ accountId: endpoint.accountId, endpointId: endpoint.id, limit: 10, searchTokens: [token("n3")] });
    expect(one.events).toHaveLength(1);
  });
});
