import type Database from "better-sqlite3";
import { translatingErrors, type CatalogStore } from "@whc/catalog-core";
import { createAlerts } from "./alerts.js";
import { createApiKeys } from "./api-keys.js";
import { createAuditLog, createAuditWriter } from "./audit.js";
import { openCatalogDatabase } from "./database.js";
import { createEndpoints } from "./endpoints.js";
import { translateSqliteError } from "./errors.js";
import { createEventAppend } from "./event-append.js";
import { createEventSearch } from "./event-search.js";
import { createEventRemoval, createEvents } from "./events.js";
import { createDeliveryReader, createForwarding } from "./forwarding.js";
import { createListeners } from "./listeners.js";
import { createReplay } from "./replay.js";
import { createRetention } from "./retention.js";
import { createSchemas } from "./schemas.js";
import { createSearchIndexer, type SearchIndexTiming } from "./search-index.js";
import { createRedeliveries } from "./redeliveries.js";

export interface SqliteStoreOptions {
  /** A file path, or ":memory:" for tests. */
  file: string;
  /** When captures' search terms move into the index (tests shorten it). */
  searchIndex?: SearchIndexTiming;
}

/**
 * The embedded catalog: one SQLite file in WAL mode with synchronous=FULL, so a committed
 * batch survives a crash of the process or the machine before any sender is answered.
 * Several catalog processes may share the file: every transaction that writes after reading
 * is IMMEDIATE (it holds the write lock from its first read, so it never fails to upgrade),
 * and waits up to busy_timeout for the lock.
 */
export function openSqliteStore(options: SqliteStoreOptions): CatalogStore {
  return createSqliteStore(openCatalogDatabase(options.file), options.searchIndex);
}

/** The store over an open catalog database; it closes the database when closed. */
export function createSqliteStore(db: Database.Database, searchIndexTiming?: SearchIndexTiming): CatalogStore {
  const searchIndex = createSearchIndexer(db, searchIndexTiming);
  const removeEvent = createEventRemoval(db);
  const readDeliveries = createDeliveryReader(db);
  const writeAudit = createAuditWriter(db);
  const store: CatalogStore = {
    kind: "sqlite",
    ...createApiKeys(db, writeAudit),
    ...createEndpoints(db, writeAudit),
    ...createEventAppend(db, searchIndex),
    ...createEventSearch(db),
    ...createEvents(db, removeEvent, readDeliveries, writeAudit),
    ...createForwarding(db, readDeliveries, writeAudit),
    ...createReplay(db, writeAudit),
    ...createAuditLog(db, writeAudit),
    ...createRetention(db, removeEvent),
    ...createListeners(db),
    ...createAlerts(db, writeAudit),
    ...createSchemas(db),
    ...createRedeliveries(db, writeAudit),

    async ping() {
      return db.open && db.prepare("SELECT 1 AS ok").get() !== undefined;
    },

    async close() {
      // Forwarding writes asked for before the close are committed first (ADR 0097, ADR 0098).
      await new Promise((resolve) => setImmediate(resolve));
      searchIndex.close();
      if (db.open) db.close();
    },
  };
  return translatingErrors(store, (err, method) => translateSqliteError(err, method, db.open));
}
