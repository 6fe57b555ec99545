import type Database from "better-sqlite3";
import type { CatalogStore } from "@whc/catalog-core";
import type { RemoveEvent } from "./events.js";

/** Events deleted per transaction: a purge never holds the write lock for long. */
const PURGE_CHUNK = 2000;

/**
 * The retention purge: old events go in chunks, each endpoint noting how many it lost; then
 * the deduplication keys whose window has ended (ADR 0083), in chunks too.
 */
export function createRetention(db: Database.Database, removeEvent: RemoveEvent): Pick<CatalogStore, "purgeEvents" | "countDedupeKeys"> {
  const stmt = {
    purgeKeys: db.prepare(`DELETE FROM dedupe_keys WHERE (endpoint_id, key_hash) IN
      (SELECT endpoint_id, key_hash FROM dedupe_keys WHERE expires_at <= ? LIMIT ?)`),
    countKeys: db.prepare("SELECT count(*) AS n FROM dedupe_keys WHERE endpoint_id = ?").pluck(),
    oldEvents: db.prepare("SELECT seq, endpoint_id FROM events WHERE received_at < ? ORDER BY received_at LIMIT ?"),
    notePurge: db.prepare(`UPDATE endpoints SET purged_event_count = purged_event_count + ?,
      event_count = max(event_count - ?, 0), last_purged_at = ? WHERE id = ?`),
  };

  const purgeChunkTx = db.transaction((before: number, now: number) => {
    const rows = stmt.oldEvents.all(before, PURGE_CHUNK) as { seq: number; endpoint_id: string }[];
    const perEndpoint = new Map<string, number>();
    for (const r of rows) {
      removeEvent(r.seq);
      perEndpoint.set(r.endpoint_id, (perEndpoint.get(r.endpoint_id) ?? 0) + 1);
    }
    for (const [endpointId, n] of perEndpoint) stmt.notePurge.run(n, n, now, endpointId);
    return rows.length;
  });

  const purgeKeysTx = db.transaction((now: number) => stmt.purgeKeys.run(now, PURGE_CHUNK).changes);
  // Let other work run between chunks: a purge never stalls ingest for long.
  const yieldNow = () => new Promise((resolve) => setImmediate(resolve));

  return {
    async purgeEvents(before, now) {
      let total = 0;
      for (;;) {
        const n = purgeChunkTx.immediate(before, now);
        total += n;
        if (n < PURGE_CHUNK) break;
        await yieldNow();
      }
      while (purgeKeysTx.immediate(now) >= PURGE_CHUNK) await yieldNow();
      return total;
    },
    async countDedupeKeys(endpointId) {
      return stmt.countKeys.get(endpointId) as number;
    },
  };
}
