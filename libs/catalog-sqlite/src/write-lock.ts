import type Database from "better-sqlite3";
import { performance } from "node:perf_hooks";

/** How long any statement waits for another process's lock on the file before failing. */
export const BUSY_TIMEOUT_MS = 5000;

/** Between two tries for the write lock, when another process holds it. */
const RETRY_PAUSE_MS = 0.2;

/**
 * Runs an IMMEDIATE transaction, waiting for the file's write lock in steps of 0.2 ms instead
 * of through SQLite's busy handler (which sleeps 1, 2, 5, 10... up to 100 ms between tries):
 * with several catalog processes appending to one file, the lock changes hands every few
 * milliseconds, and one whose handler had backed off to 50-100 ms held its ingest's captures
 * that long (docs/performance.md, "Catalog replicas"). Gives up after BUSY_TIMEOUT_MS like the
 * handler, with the same SQLITE_BUSY. The caller's thread waits, as it does in the handler.
 */
export function createWriteLockWait(db: Database.Database): <T>(transaction: () => T) => T {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  return function underWriteLock<T>(transaction: () => T): T {
    const deadline = performance.now() + BUSY_TIMEOUT_MS;
    db.pragma("busy_timeout = 0");
    try {
      for (;;) {
        try {
          return transaction();
        } catch (err) {
          const busy = (err as { code?: unknown }).code === "SQLITE_BUSY";
          if (!busy || performance.now() >= deadline) throw err;
          Atomics.wait(pause, 0, 0, RETRY_PAUSE_MS);
        }
      }
    } finally {
      db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  };
}
