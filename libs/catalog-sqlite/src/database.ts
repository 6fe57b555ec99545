import Database from "better-sqlite3";
import path from "node:path";
import { ensurePrivateDir, ensurePrivateFile } from "@whc/config";
import { addMissingColumns, addedIndexesSql, moveLegacyDeliveries, schemaSql, DELIVERIES_VERSION, SCHEMA_VERSION } from "./schema.js";
import { BUSY_TIMEOUT_MS, createWriteLockWait } from "./write-lock.js";

/** Page size of a new catalog file (docs/performance.md, "Embedded catalog page size"). */
const PAGE_SIZE = 16384;

/**
 * Opens (creating if needed) the catalog file: WAL mode with synchronous=FULL, so a committed
 * batch survives a crash of the process or the machine before any sender is answered. The
 * file is made 0600 in a 0700 directory before SQLite opens it: SQLite gives its -wal and
 * -shm files the mode of the database file.
 */
export function openCatalogDatabase(file: string): Database.Database {
  if (file !== ":memory:") {
    ensurePrivateDir(path.dirname(path.resolve(file)));
    ensurePrivateFile(file);
    for (const companion of [`${file}-wal`, `${file}-shm`]) ensurePrivateFile(companion, { mustExist: false });
  }
  const db = new Database(file);
  // First: several catalog processes may open (and migrate) one file at once; each waits for
  // the others' locks instead of failing with SQLITE_BUSY.
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  // A stored event's body row (ciphertext, headers, wrapped key: about 2.4 KB for a 1.5 KB
  // webhook) fits once in a 4 KiB page and six times in a 16 KiB one: a new catalog takes
  // about 40 % less disk and writes that much less per capture. Only a new file takes the
  // setting; an existing catalog keeps the page size it was created with.
  db.pragma(`page_size = ${PAGE_SIZE}`);
  // Turning a new file to WAL takes an exclusive lock, and when another process opening the
  // same new file holds a lock then, SQLite answers SQLITE_BUSY at once, without its busy
  // handler; the migration below, a read then a write, can be refused the same way when
  // another process wrote in between. Both wait for the lock as an append does.
  const underWriteLock = createWriteLockWait(db);
  const mode = underWriteLock(() => db.pragma("journal_mode = WAL", { simple: true }));
  if (file !== ":memory:" && mode !== "wal") throw new Error(`the catalog file could not be put in WAL mode (journal_mode is ${String(mode)})`);
  db.pragma("synchronous = FULL");
  db.pragma("foreign_keys = ON");
  db.pragma("cache_size = -65536");
  underWriteLock(() => db.transaction(() => migrate(db)).immediate());
  return db;
}

/** Creates what is missing of the schema, in one transaction. */
function migrate(db: Database.Database): void {
  db.exec("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
  // A new file has no version yet: nothing to move.
  const version = db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").pluck().get() as string | undefined;
  db.exec(schemaSql);
  addMissingColumns(db);
  db.exec(addedIndexesSql);
  if (version !== undefined && Number(version) < DELIVERIES_VERSION) moveLegacyDeliveries(db);
  // The search index is merged a bounded slice per append (see event-append.ts), not by
  // FTS5's automerge, whose work comes in lumps of 64 pages per level: 40-60 ms commits
  // under load.
  db.exec("INSERT INTO event_search(event_search, rank) VALUES ('automerge', 0)");
  db.prepare(
    "INSERT INTO meta (key, value) VALUES ('schema_version', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value WHERE CAST(value AS INTEGER) < CAST(excluded.value AS INTEGER)",
  ).run(String(SCHEMA_VERSION));
}
