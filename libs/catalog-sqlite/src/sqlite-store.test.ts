import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createStamper } from "@whc/catalog-core";
import { catalogStoreContract, endpointFixture, eventFixture, keyHash, token } from "@whc/catalog-core/testing";
import { tempDir } from "@whc/testing";
import path from "node:path";
import { openSqliteStore } from "./sqlite-store.js";

let dir: ReturnType<typeof tempDir> | undefined;

catalogStoreContract("embedded SQLite", {
  async open() {
    dir = tempDir("whc-sqlite-");
    return openSqliteStore({ file: path.join(dir.path, "catalog.db") });
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

  it("merges as events arrive: many small commits leave a few segments and every event findable", async () => {
    const file = path.join(where.path, "catalog.db");
    const store = openSqliteStore({ file });
    const { key } = await store.ensureApiKey("merge", keyHash("merge"), "whc_merge", Date.now());
    const endpoint = await store.createEndpoint(endpointFixture(key.accountId));
    const stamp = createStamper();
    // One commit per event, as ingest makes when idle: each adds a segment to the index.
    for (let i = 0; i < 400; i += 1) {
      await store.appendEvents([eventFixture(endpoint, { words: ["common", `w${i}`, `g${i % 7}`] })], stamp);
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
