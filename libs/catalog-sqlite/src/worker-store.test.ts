import Database from "better-sqlite3";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { catalogStoreContract, endpointFixture, eventFixture, keyHash } from "@whc/catalog-core/testing";
import { tempDir } from "@whc/testing";
import { expectReason, auditFixture } from "./testing/index.js";
import { openSqliteStoreInWorker } from "./worker-store.js";

let dir: ReturnType<typeof tempDir> | undefined;

catalogStoreContract("embedded SQLite on a worker thread", {
  async open() {
    dir = tempDir("whc-sqlite-worker-");
    return openSqliteStoreInWorker({ file: path.join(dir.path, "catalog.db") });
  },
  async reopen() {
    return openSqliteStoreInWorker({ file: path.join(dir!.path, "catalog.db") });
  },
  async another() {
    return openSqliteStoreInWorker({ file: path.join(dir!.path, "catalog.db") });
  },
  async cleanup() {
    dir?.remove();
  },
});

describe("embedded SQLite on a worker thread: point reads on the caller's thread (ADR 0099)", () => {
  let where: ReturnType<typeof tempDir>;
  beforeEach(() => {
    where = tempDir("whc-sqlite-worker-reads-");
  });
  afterEach(() => where.remove());

  it("answers a key and an endpoint while the store's thread is busy, and sees every write answered before", async () => {
    const store = await openSqliteStoreInWorker({ file: path.join(where.path, "catalog.db") });
    try {
      const { key } = await store.ensureApiKey("r", keyHash("r"), "whc_r", 1);
      const endpoint = await store.createEndpoint(endpointFixture(key.accountId));
      // A large append keeps the store's thread busy; the reads asked for after it are answered first.
      const order: string[] = [];
      const events = Array.from({ length: 3000 }, () => eventFixture(endpoint));
      const appended = store.appendEvents(events, () => Date.now()).then(() => order.push("append"));
      const [found, read] = await Promise.all([
        store.findApiKeyByHash(keyHash("r")).then((k) => (order.push("key"), k)),
        store.getEndpoint(endpoint.id, key.accountId).then((e) => (order.push("endpoint"), e)),
      ]);
      await appended;
      expect(order).toEqual(["key", "endpoint", "append"]);
      expect([found?.id, read?.id]).toEqual([key.id, endpoint.id]);

      // Written on the store's thread, read here at once.
      await store.updateEndpoint(key.accountId, endpoint.id, { displayName: "renamed" }, Date.now());
      expect((await store.getEndpoint(endpoint.id, key.accountId))?.displayName).toBe("renamed");
      await store.revokeApiKey(key.id, 2);
      expect((await store.findApiKeyByHash(keyHash("r")))?.revokedAt).toBe(2);
      await store.deleteEndpoint(key.accountId, endpoint.id);
      expect(await store.getEndpoint(endpoint.id, key.accountId)).toBeUndefined();
    } finally {
      await store.close();
    }
  });
});

describe("embedded SQLite on a worker thread: driver failures", () => {
  let where: ReturnType<typeof tempDir>;
  beforeEach(() => {
    where = tempDir("whc-sqlite-worker-errors-");
  });
  afterEach(() => where.remove());

  it("a file that cannot be opened: opening fails with the driver's reason, as start-up's one line says it", async () => {
    const file = path.join(where.path, "catalog.db");
    writeFileSync(file, "not a catalog ".repeat(512));
    const err = await expectReason(openSqliteStoreInWorker({ file }), "service_unavailable", "SQLITE_NOTADB");
    expect(err.message).toBe("embedded store stopped: SQLITE_NOTADB");
  });

  it("come out as the store's AppError reason, the driver's text only in the cause", async () => {
    const file = path.join(where.path, "catalog.db");
    const store = await openSqliteStoreInWorker({ file });
    try {
      const { key } = await store.ensureApiKey("w", keyHash("w"), "whc_w", 1);
      const endpoint = await store.createEndpoint(endpointFixture(key.accountId));
      const slugTaken = await expectReason(store.createEndpoint(endpointFixture(key.accountId, { slug: endpoint.slug })), "slug_taken");
      expect(slugTaken.field).toBe("slug");

      const other = new Database(file);
      other.exec("DROP TABLE replay_audit");
      other.close();
      const err = await expectReason(store.recordReplayAudit(auditFixture("01a20000-0000-7000-8000-000000000003")), "internal_error", "SQLITE_ERROR");
      expect(err.message).toBe("embedded store: SQLITE_ERROR");
      expect((err.cause as Error).message).toContain("no such table");
    } finally {
      await store.close();
    }
  });
});
