import type Database from "better-sqlite3";
import type { AuditCursor, AuditQuery, AuditRecord, CatalogStore } from "@whc/catalog-core";
import { auditLogRows, type Row } from "./rows.js";

export type AuditMethods = Pick<CatalogStore, "recordAudit" | "listAudit" | "purgeAudit">;

/**
 * Writes an audited action's entry; called inside the action's own transaction, so that the
 * entry and the action commit together or not at all (ADR 0053). Undefined: no entry.
 */
export type WriteAudit = (entry: AuditRecord | undefined) => void;

export function createAuditWriter(db: Database.Database): WriteAudit {
  const insert = db.prepare(auditLogRows.insertSql());
  return (entry) => {
    if (entry) insert.run(auditLogRows.values(entry));
  };
}

/** Entries deleted per transaction: a purge never holds the write lock for long. */
const PURGE_CHUNK = 2000;

/** The filters of a page, as SQL after `account_id = ?`, with their parameters. */
function filterOf(q: AuditQuery): { sql: string; params: unknown[] } {
  const parts: [string, unknown][] = [];
  if (q.fromMs !== undefined) parts.push(["at >= ?", q.fromMs]);
  if (q.toMs !== undefined) parts.push(["at < ?", q.toMs]);
  if (q.action !== undefined) parts.push(["action = ?", q.action]);
  if (q.keyId !== undefined) parts.push(["key_id = ?", q.keyId]);
  if (q.endpointId !== undefined) parts.push(["endpoint_id = ?", q.endpointId]);
  if (q.eventId !== undefined) parts.push(["event_id = ?", q.eventId]);
  return { sql: parts.map(([sql]) => ` AND ${sql}`).join(""), params: parts.map(([, v]) => v) };
}

const olderSql = (c: AuditCursor | undefined) => (c ? " AND (at, id) < (?, ?)" : "");
const cursorParams = (c: AuditCursor | undefined) => (c ? [c.at, c.id] : []);

/** The audit log's own reads and its retention purge; entries are written by the actions (WriteAudit). */
export function createAuditLog(db: Database.Database, write: WriteAudit): AuditMethods {
  const prepared = new Map<string, Database.Statement>();
  const prep = (sql: string) => {
    let statement = prepared.get(sql);
    if (!statement) prepared.set(sql, (statement = db.prepare(sql)));
    return statement;
  };
  const purgeChunk = db.prepare(`DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < ? ORDER BY at LIMIT ${PURGE_CHUNK})`);

  return {
    async recordAudit(entry) {
      write(entry);
    },

    // Newest first by (at, id), as events are listed (design §3): `after` takes the `limit`
    // entries just newer than it, still answered newest first.
    async listAudit(q) {
      const f = filterOf(q);
      const base = `SELECT * FROM audit_log WHERE account_id = ?${f.sql}`;
      if (q.after) {
        const rows = prep(`${base} AND (at, id) > (?, ?)${olderSql(q.before)} ORDER BY at, id LIMIT ?`).all(
          q.accountId,
          ...f.params,
          q.after.at,
          q.after.id,
          ...cursorParams(q.before),
          q.limit,
        ) as Row[];
        rows.reverse();
        const oldest = rows.at(-1);
        const older = oldest && prep(`SELECT 1 FROM audit_log WHERE account_id = ?${f.sql} AND (at, id) < (?, ?) LIMIT 1`).get(q.accountId, ...f.params, oldest.at, oldest.id);
        return { entries: rows.map((r) => auditLogRows.read(r)), hasOlder: older !== undefined && oldest !== undefined };
      }
      const rows = prep(`${base}${olderSql(q.before)} ORDER BY at DESC, id DESC LIMIT ?`).all(q.accountId, ...f.params, ...cursorParams(q.before), q.limit + 1) as Row[];
      return { entries: rows.slice(0, q.limit).map((r) => auditLogRows.read(r)), hasOlder: rows.length > q.limit };
    },

    async purgeAudit(before) {
      let total = 0;
      for (;;) {
        const { changes } = db.transaction(() => purgeChunk.run(before)).immediate();
        total += changes;
        if (changes < PURGE_CHUNK) return total;
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
  };
}
