export { createSqliteStore, openSqliteStore } from "./sqlite-store.js";
/** The catalog file opened (and migrated) as the store opens it: for tools that measure the store's SQL beside it. */
export { openCatalogDatabase } from "./database.js";
export type { SqliteStoreOptions } from "./sqlite-store.js";
export { openSqliteStoreInWorker } from "./worker-store.js";
/** The append's hand-over to the store's thread: for tools that measure it. */
export { decodeAppend, encodeAppend } from "./append-codec.js";
export { createSharedBytes } from "./shared-bytes.js";
