import type Database from "better-sqlite3";
import type { AuditRecord, CatalogStore, ReplayAuditRecord } from "@whc/catalog-core";
import { auditRows } from "./rows.js";
import type { WriteAudit } from "./audit.js";

export type ReplayMethods = Pick<CatalogStore, "chargeReplay" | "getReplayUsage" | "recordReplayAudit">;

/** The daily replay allowance per account, and the audit trail of replays. */
export function createReplay(db: Database.Database, writeAudit: WriteAudit): ReplayMethods {
  const stmt = {
    // Counts only while below the limit: no row returned means the day's allowance is used up.
    charge: db.prepare(`INSERT INTO replay_counters (account_id, day, used) VALUES (?, ?, 1)
      ON CONFLICT (account_id, day) DO UPDATE SET used = used + 1 WHERE used < ? RETURNING used`),
    usage: db.prepare("SELECT used FROM replay_counters WHERE account_id = ? AND day = ?"),
    insertAudit: db.prepare(auditRows.insertSql()),
  };

  const recordTx = db.transaction((audit: ReplayAuditRecord, entry: AuditRecord | undefined) => {
    stmt.insertAudit.run(auditRows.values(audit));
    writeAudit(entry);
  });

  const usage = (accountId: string, day: string) =>
    (stmt.usage.get(accountId, day) as { used: number } | undefined)?.used ?? 0;

  return {
    async chargeReplay(accountId, day, limit) {
      if (limit <= 0) return { allowed: false, used: usage(accountId, day) };
      const row = stmt.charge.get(accountId, day, limit) as { used: number } | undefined;
      if (row) return { allowed: true, used: row.used };
      return { allowed: false, used: usage(accountId, day) };
    },

    async getReplayUsage(accountId, day) {
      return usage(accountId, day);
    },

    async recordReplayAudit(audit, entry) {
      recordTx.immediate(audit, entry);
    },
  };
}
