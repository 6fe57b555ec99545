import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { catalogStoreContract, endpointFixture, eventFixture, keyHash, token } from "@whc/catalog-core/testing";
import { tempDir } from "@whc/testing";
import path from "node:path";
import { statSync } from "node:fs";
import { schemaSql } from "./schema.js";
import { openSqliteStore } from "./sqlite-store.js";
import { openSqliteStoreInWorker } from "./worker-store.js";

let dir: ReturnType<typeof tempDir> | undefined;

catalogStoreContract("embedded SQLite", {
  async open() {
    dir = tempDir("whc-sqlite-");
    return openSqliteStore({ file: path.join(dir.path, "catalog.db") });
  },
  async reopen() {
    return openSqliteStore({ file: path.join(dir!.path, "catalog.db") });
  },
  // On its own thread: the two stores' transactions really run at the same time.
  async another() {
    return openSqliteStoreInWorker({ file: path.join(dir!.path, "catalog.db") });
  },
  async cleanup() {
    dir?.remove();
  },
});

describe("embedded SQLite search index", () => {
  let where: ReturnType<typeof tempDir>;
  beforeEach(() => {
    where = tempDir("whc-sqlite-merge-");
  });
  afterEach(() => where.remove());

  it("merges as events arrive: many small runs leave a few segments and every event findable", async () => {
    const file = path.join(where.path, "catalog.db");
    // A run per capture (as a run of one after each idle capture would): each adds a segment.
    const store = openSqliteStore({ file, searchIndex: { batch: 1, inline: true } });
    const { key } = await store.ensureApiKey("merge", keyHash("merge"), "whc_merge", Date.now());
    const endpoint = await store.createEndpoint(endpointFixture(key.accountId));
    const clock = Date.now;
    for (let i = 0; i < 400; i += 1) {
      await store.appendEvents([eventFixture(endpoint, { words: ["common", `w${i}`, `g${i % 7}`] })], clock);
    }
    const found = await store.listEvents({ accountId: key.accountId, endpointId: endpoint.id, limit: 500, searchTokens: [token("common")] });
    expect(found.events).toHaveLength(400);
    const group = await store.listEvents({
      accountId: key.accountId,
      endpointId: endpoint.id,
      limit: 500,
      searchTokens: [token("common"), token("g3")],
    });
    expect(group.events).toHaveLength(57);
    await store.close();

    const db = new Database(file, { readonly: true });
    const { segments } = db.prepare("SELECT count(DISTINCT segid) AS segments FROM event_search_idx").get() as { segments: number };
    db.close();
    // Unmerged (automerge off, no merge per append), the same commits leave 10.
    expect(segments).toBeLessThanOrEqual(6);
  });
});

describe("embedded SQLite on disk", () => {
  let where: ReturnType<typeof tempDir>;
  beforeEach(() => {
    where = tempDir("whc-sqlite-disk-");
  });
  afterEach(() => where.remove());

  /** A 1.5 KB webhook as ingest stores it: sealed body, a dozen headers, ~45 search tokens. */
  function webhookLike(endpoint: { id: string; accountId: string }, i: number) {
    return eventFixture(endpoint, {
      headers: Array.from({ length: 12 }, (_, h) => [`X-Header-${h}`, `value ${h} of request ${i}`.padEnd(32, ".")] as [string, string]),
      body: { ciphertext: new Uint8Array(1536 + 28).fill(i % 251), wrappedKey: new Uint8Array(60).fill(7), keyId: "k1" },
      originalSizeBytes: 1536,
      words: Array.from({ length: 45 }, (_, w) => `word${w}`).concat(`id${i}`),
    });
  }

  it("keeps a new catalog compact: 1.5 KB webhooks take under 3 KB of disk each, beside the empty file's pages", async () => {
    const file = path.join(where.path, "catalog.db");
    const empty = openSqliteStore({ file });
    const { key } = await empty.ensureApiKey("disk", keyHash("disk"), "whc_disk", Date.now());
    const endpoint = await empty.createEndpoint(endpointFixture(key.accountId));
    await empty.close(); // the last connection to close checkpoints the WAL into the file
    // What every new file holds before its first event (a page per table and index): not a cost per webhook.
    const schemaBytes = statSync(file).size;
    const store = openSqliteStore({ file });
    const clock = Date.now;
    const count = 1200;
    for (let i = 0; i < count; i += 60) {
      await store.appendEvents(Array.from({ length: 60 }, (_, j) => webhookLike(endpoint, i + j)), clock);
    }
    await store.close(); // moves the pending search terms into the index
    // The pages search_pending held until then are free, for the next captures' terms: at most
    // a couple of thousand captures' worth (~350 B each) at any time, not a cost per capture.
    const db = new Database(file, { readonly: true });
    const freeBytes = (db.pragma("freelist_count", { simple: true }) as number) * (db.pragma("page_size", { simple: true }) as number);
    db.close();
    // With 4 KiB pages each body row (~2.4 KB) fills a page of its own: 4.7 KB per event. 3.52 KB
    // measured once routing's and schemas' columns and indexes came (2026-11-27), the empty file's
    // pages counted in; 3.59 KB so with bulk redelivery's table and indexes (2026-11-28), 2.83 KB
    // without them: every new table or index added a page to the file, not to each event.
    expect((statSync(file).size - freeBytes - schemaBytes) / count).toBeLessThan(3000);
  });

  it("opens a catalog created with 4 KiB pages and keeps using it as it is", async () => {
    const file = path.join(where.path, "catalog.db");
    const old = new Database(file);
    old.pragma("page_size = 4096");
    old.pragma("journal_mode = WAL");
    old.exec(schemaSql);
    old.close();

    const store = openSqliteStore({ file });
    const { key } = await store.ensureApiKey("old", keyHash("old"), "whc_old", Date.now());
    const endpoint = await store.createEndpoint(endpointFixture(key.accountId));
    await store.appendEvents([webhookLike(endpoint, 1), webhookLike(endpoint, 2)], Date.now);
    const found = await store.listEvents({ accountId: key.accountId, endpointId: endpoint.id, limit: 10, searchTokens: [token("id2")] });
    expect(found.events).toHaveLength(1);
    await store.close();

    const db = new Database(file, { readonly: true });
    expect(db.pragma("page_size", { simple: true })).toBe(4096);
    db.close();
  });
});
