export { openSqliteStore } from "./sqlite-store.js";
export type { SqliteStoreOptions } from "./sqlite-store.js";
export { openSqliteStoreInWorker } from "./worker-store.js";
