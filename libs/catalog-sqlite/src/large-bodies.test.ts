import { afterEach, describe, expect, it } from "vitest";
import path from "node:path";
import { endpointFixture, eventFixture, keyHash } from "@whc/catalog-core/testing";
import { tempDir } from "@whc/testing";
import { openCatalogDatabase } from "./database.js";
import { createSqliteStore } from "./sqlite-store.js";

const MIB = 1024 * 1024;

/** A catalog whose connection records the pragmas it is asked after it opened. */
async function recordingCatalog() {
  const where = tempDir("whc-sqlite-large-");
  const db = openCatalogDatabase(path.join(where.path, "catalog.db"));
  const store = createSqliteStore(db);
  const { key } = await store.ensureApiKey("large", keyHash("large"), "whc_larg", 1);
  const endpoint = await store.createEndpoint(endpointFixture(key.accountId));
  const pragmas: string[] = [];
  const pragma = db.pragma.bind(db);
  db.pragma = ((source: string, options?: Parameters<typeof pragma>[1]) => {
    pragmas.push(source);
    return pragma(source, options);
  }) as typeof db.pragma;
  const storedBodies = () => (db.prepare("SELECT count(*) AS n FROM event_bodies").get() as { n: number }).n;
  return { store, endpoint, pragmas, storedBodies, close: async () => (await store.close(), where.remove()) };
}

describe("embedded SQLite: large bodies and the page cache", () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => close?.());

  it("empties its page cache after 16 MiB of large bodies, so they do not stay in memory; ordinary bodies never", async () => {
    const c = await recordingCatalog();
    close = c.close;
    const small = eventFixture(c.endpoint, { body: { ciphertext: new Uint8Array(1536).fill(7), wrappedKey: new Uint8Array([9]), keyId: "k1" } });
    for (let i = 0; i < 40; i += 1) await c.store.appendEvents(Array.from({ length: 25 }, () => small), Date.now);
    expect(c.pragmas).not.toContain("shrink_memory");

    const large = eventFixture(c.endpoint, { body: { ciphertext: new Uint8Array(MIB).fill(8), wrappedKey: new Uint8Array([9]), keyId: "k1" } });
    for (let i = 0; i < 15; i += 1) await c.store.appendEvents([large], Date.now);
    expect(c.pragmas).not.toContain("shrink_memory");
    await c.store.appendEvents([large], Date.now);
    expect(c.pragmas.filter((p) => p === "shrink_memory")).toHaveLength(1);
    for (let i = 0; i < 16; i += 1) await c.store.appendEvents([large], Date.now);
    expect(c.pragmas.filter((p) => p === "shrink_memory")).toHaveLength(2);

    // Everything stays readable after the cache was emptied.
    expect(c.storedBodies()).toBe(1000 + 32);
    const page = await c.store.listEvents({ accountId: c.endpoint.accountId, endpointId: c.endpoint.id, limit: 5 });
    expect(page.events).toHaveLength(5);
    const newest = await c.store.getEvent(c.endpoint.accountId, c.endpoint.id, page.events[0]!.id);
    expect(newest?.body?.ciphertext).toEqual(large.body?.ciphertext);
  });
});
