import type Database from "better-sqlite3";
import type { CatalogStore, ListenerRecord } from "@whc/catalog-core";

export type ListenerMethods = Pick<CatalogStore, "countEventsAfter" | "putListener" | "listListeners" | "deleteListener">;

interface ListenerRow {
  endpoint_id: string;
  id: string;
  account_id: string;
  host: string;
  started_at: number;
  last_seen_at: number;
  expires_at: number;
  cursor_at: number | null;
  cursor_id: string | null;
  lag_events: number;
  lag_run_since: number;
  last_error: string | null;
}

const COLUMNS = "endpoint_id, id, account_id, host, started_at, last_seen_at, expires_at, cursor_at, cursor_id, lag_events, lag_run_since, last_error";

function rowOf(l: ListenerRecord): ListenerRow {
  return {
    endpoint_id: l.endpointId,
    id: l.id,
    account_id: l.accountId,
    host: l.host,
    started_at: l.startedAt,
    last_seen_at: l.lastSeenAt,
    expires_at: l.expiresAt,
    cursor_at: l.cursor?.receivedAt ?? null,
    cursor_id: l.cursor?.id ?? null,
    lag_events: l.lagEvents,
    lag_run_since: l.lagRunSince,
    last_error: l.lastError ?? null,
  };
}

function recordOf(r: ListenerRow): ListenerRecord {
  return {
    id: r.id,
    accountId: r.account_id,
    endpointId: r.endpoint_id,
    host: r.host,
    startedAt: r.started_at,
    lastSeenAt: r.last_seen_at,
    expiresAt: r.expires_at,
    cursor: r.cursor_at === null || r.cursor_id === null ? undefined : { receivedAt: r.cursor_at, id: r.cursor_id },
    lagEvents: r.lag_events,
    lagRunSince: r.lag_run_since,
    lastError: r.last_error ?? undefined,
  };
}

/**
 * Listener liveness (design §19; ADR 0062): one row per live listener in `listeners`. A save
 * is an IMMEDIATE transaction that first deletes every expired row (the index on expires_at
 * finds them), so the table holds the live listeners and those of the last few seconds only,
 * and counts the endpoint's others under the write lock, so that two stores never both admit
 * one listener past the limit.
 */
export function createListeners(db: Database.Database): ListenerMethods {
  const stmt = {
    // Bounded: the index events_page walks at most `limit` entries after the cursor.
    countAfter: db
      .prepare(
        `SELECT count(*) FROM (SELECT 1 FROM events WHERE endpoint_id = ? AND account_id = ?
          AND (received_at > ? OR (received_at = ? AND id > ?)) LIMIT ?)`,
      )
      .pluck(),
    expire: db.prepare("DELETE FROM listeners WHERE expires_at <= ?"),
    exists: db.prepare("SELECT 1 FROM listeners WHERE endpoint_id = ? AND id = ?").pluck(),
    count: db.prepare("SELECT count(*) FROM listeners WHERE endpoint_id = ?").pluck(),
    upsert: db.prepare(
      `INSERT INTO listeners (${COLUMNS}) VALUES (@endpoint_id, @id, @account_id, @host, @started_at, @last_seen_at, @expires_at,
        @cursor_at, @cursor_id, @lag_events, @lag_run_since, @last_error)
       ON CONFLICT (endpoint_id, id) DO UPDATE SET host = excluded.host, started_at = excluded.started_at,
        last_seen_at = excluded.last_seen_at, expires_at = excluded.expires_at, cursor_at = excluded.cursor_at,
        cursor_id = excluded.cursor_id, lag_events = excluded.lag_events, lag_run_since = excluded.lag_run_since,
        last_error = excluded.last_error
       WHERE listeners.account_id = excluded.account_id`,
    ),
    live: db.prepare(`SELECT ${COLUMNS} FROM listeners WHERE endpoint_id = ? AND account_id = ? AND expires_at > ? ORDER BY started_at, id`),
    remove: db.prepare("DELETE FROM listeners WHERE endpoint_id = ? AND account_id = ? AND id = ?"),
  };

  const save = db.transaction((row: ListenerRow, maxPerEndpoint: number, now: number): boolean => {
    stmt.expire.run(now);
    const known = stmt.exists.get(row.endpoint_id, row.id) !== undefined;
    if (!known && (stmt.count.get(row.endpoint_id) as number) >= maxPerEndpoint) return false;
    stmt.upsert.run(row);
    return true;
  });

  return {
    async countEventsAfter(accountId, endpointId, after, limit) {
      return stmt.countAfter.get(endpointId, accountId, after.receivedAt, after.receivedAt, after.id, limit) as number;
    },

    async putListener(listener, maxPerEndpoint, now) {
      return save.immediate(rowOf(listener), maxPerEndpoint, now);
    },

    async listListeners(accountId, endpointId, now) {
      return (stmt.live.all(endpointId, accountId, now) as ListenerRow[]).map(recordOf);
    },

    async deleteListener(accountId, endpointId, listenerId) {
      return stmt.remove.run(endpointId, accountId, listenerId).changes > 0;
    },
  };
}
