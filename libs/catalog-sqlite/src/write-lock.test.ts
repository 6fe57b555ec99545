import { spawn } from "node:child_process";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CatalogStore, EndpointRecord } from "@whc/catalog-core";
import { eventFixture } from "@whc/catalog-core/testing";
import Database from "better-sqlite3";
import path from "node:path";
import { tempDir } from "@whc/testing";
import { openCatalogDatabase } from "./database.js";
import { catalogWithEndpoint } from "./testing/index.js";

/**
 * Another process holding the file's write lock for `ms`, then committing its own write:
 * `write` (default: renaming every endpoint "held") inside BEGIN IMMEDIATE.
 */
function lockHolder(file: string, ms: number, write = "UPDATE endpoints SET display_name = 'held' WHERE 1") {
  const script = `
    const db = new (require("better-sqlite3"))(process.argv[1]);
    db.pragma("busy_timeout = 5000");
    db.exec("BEGIN IMMEDIATE");
    db.exec(${JSON.stringify(write)});
    process.stdout.write("locked\\n");
    setTimeout(() => { db.exec("COMMIT"); db.close(); }, ${ms});`;
  const child = spawn(process.execPath, ["-e", script, file], { cwd: import.meta.dirname, stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const locked = new Promise<void>((resolve, reject) => {
    child.stdout.once("data", () => resolve());
    void exited.then((code) => reject(new Error(`lock holder exited ${code}`)));
  });
  return { locked, exited };
}

describe("embedded SQLite: appends wait for another process's write lock", () => {
  let remove: () => void;
  let file: string;
  let store: CatalogStore;
  let endpoint: EndpointRecord;

  beforeEach(async () => {
    ({ file, store, endpoint, remove } = await catalogWithEndpoint("lock"));
  });
  afterEach(async () => {
    await store.close();
    remove();
  });

  it("commits once the other process commits, after its write and stamped after the events before", async () => {
    const [first] = await store.appendEvents([eventFixture(endpoint)], Date.now);
    const holder = lockHolder(file, 300);
    await holder.locked;
    // Waits (this thread blocked) until the other process commits, then appends after it.
    const [second] = await store.appendEvents([eventFixture(endpoint)], () => 1);
    expect(await holder.exited).toBe(0);
    expect(second!.id > first!.id).toBe(true);
    expect((await store.getEndpoint(endpoint.id))?.displayName).toBe("held");
    expect((await store.getEndpoint(endpoint.id))?.eventCount).toBe(2);
  });
});

describe("embedded SQLite: opening a new catalog file another process is writing", () => {
  it("waits for that process's lock to turn the file to WAL and migrate it, instead of failing at start-up", async () => {
    // Two catalogs started at once on a new file: one holds a lock while the other switches
    // the file to WAL, which SQLite refuses at once (SQLITE_BUSY) without its busy handler.
    const dir = tempDir();
    const file = path.join(dir.path, "catalog.db");
    try {
      const holder = lockHolder(file, 300, "CREATE TABLE other_writer (x); INSERT INTO other_writer VALUES (1)");
      await holder.locked;
      const db = openCatalogDatabase(file);
      expect(await holder.exited).toBe(0);
      expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
      expect(db.prepare("SELECT x FROM other_writer").pluck().get()).toBe(1);
      expect(db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").pluck().get()).toBeDefined();
      db.close();
      const again = new Database(file, { readonly: true });
      expect(again.prepare("SELECT count(*) FROM endpoints").pluck().get()).toBe(0);
      again.close();
    } finally {
      dir.remove();
    }
  });
});
