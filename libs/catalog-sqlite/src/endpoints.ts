import type Database from "better-sqlite3";
import {
  PATCHED_FIELDS,
  applyEndpointPatch,
  endpointQuotaExceeded,
  forwardPrecondition,
  forwardRequired,
  meetsForwardPrecondition,
  newEndpointRecord,
  type CatalogStore,
  type EndpointPatch,
  type EndpointRecord,
  type NewEndpoint,
  type AuditRecord,
} from "@whc/catalog-core";
import { endpointRows, type Row } from "./rows.js";
import type { WriteAudit } from "./audit.js";

export type EndpointMethods = Pick<
  CatalogStore,
  "createEndpoint" | "getEndpoint" | "listEndpoints" | "deleteEndpoint" | "updateEndpoint" | "countRejections"
>;

/**
 * Endpoints; deleting one deletes its events (rows, bodies, search postings, deliveries and
 * their attempts) with it. An
 * update writes the patched record (applyEndpointPatch) in an IMMEDIATE transaction: no append
 * can move the sequence counter between its read and its write.
 */
export function createEndpoints(db: Database.Database, writeAudit: WriteAudit): EndpointMethods {
  const patched = endpointRows.update(PATCHED_FIELDS, "key = ?");
  const stmt = {
    insert: db.prepare(endpointRows.insertSql()),
    update: db.prepare(patched.sql),
    byId: db.prepare("SELECT * FROM endpoints WHERE id = ?"),
    ofAccount: db.prepare("SELECT * FROM endpoints WHERE id = ? AND account_id = ?"),
    // Both walk the index endpoints_account (account_id, id): a page reads `limit` rows.
    list: db.prepare("SELECT * FROM endpoints WHERE account_id = ? ORDER BY id"),
    page: db.prepare("SELECT * FROM endpoints WHERE account_id = ? AND id > ? ORDER BY id LIMIT ?"),
    // Counts no further than the quota: the cost of a create stays bounded by it.
    countUpTo: db.prepare("SELECT COUNT(*) AS n FROM (SELECT 1 FROM endpoints WHERE account_id = ? LIMIT ?)"),
    delete: db.prepare("DELETE FROM endpoints WHERE id = ? AND account_id = ?"),
    deleteSearch: db.prepare("DELETE FROM event_search WHERE rowid IN (SELECT seq FROM events WHERE endpoint_id = ?)"),
    deleteBodies: db.prepare("DELETE FROM event_bodies WHERE seq IN (SELECT seq FROM events WHERE endpoint_id = ?)"),
    deleteAttempts: db.prepare("DELETE FROM delivery_attempts WHERE seq IN (SELECT seq FROM events WHERE endpoint_id = ?)"),
    deleteDeliveries: db.prepare("DELETE FROM deliveries WHERE seq IN (SELECT seq FROM events WHERE endpoint_id = ?)"),
    deleteEvents: db.prepare("DELETE FROM events WHERE endpoint_id = ?"),
    deleteSchemas: db.prepare("DELETE FROM event_schemas WHERE endpoint_id = ?"),
    deleteDedupeKeys: db.prepare("DELETE FROM dedupe_keys WHERE endpoint_id = ?"),
    deleteRedeliveryJobs: db.prepare("DELETE FROM redelivery_jobs WHERE endpoint_id = ?"),
    deleteBreakers: db.prepare("DELETE FROM destination_breakers WHERE endpoint_id = ?"),
    addRejections: db.prepare("UPDATE endpoints SET rejected_count = rejected_count + ? WHERE id = ?"),
  };
  const rejectionsTx = db.transaction((counts: readonly { endpointId: string; count: number }[]) => {
    for (const { endpointId, count } of counts) stmt.addRejections.run(count, endpointId);
  });

  const deleteTx = db.transaction((accountId: string, endpointId: string, audit: AuditRecord | undefined) => {
    if (!stmt.ofAccount.get(endpointId, accountId)) return false;
    stmt.deleteSearch.run(endpointId);
    stmt.deleteBodies.run(endpointId);
    stmt.deleteAttempts.run(endpointId);
    stmt.deleteDeliveries.run(endpointId);
    stmt.deleteEvents.run(endpointId);
    stmt.deleteSchemas.run(endpointId);
    stmt.deleteDedupeKeys.run(endpointId);
    stmt.deleteRedeliveryJobs.run(endpointId);
    stmt.deleteBreakers.run(endpointId);
    stmt.delete.run(endpointId, accountId);
    writeAudit(audit);
    return true;
  });

  // IMMEDIATE: the count and the insert happen under the write lock, so no other create, from
  // this process or another one sharing the file, lands between them (ADR 0036).
  const createTx = db.transaction((endpoint: NewEndpoint, quota: number | undefined, audit: AuditRecord | undefined) => {
    if (quota !== undefined && (stmt.countUpTo.get(endpoint.accountId, quota) as { n: number }).n >= quota) {
      throw endpointQuotaExceeded(quota);
    }
    stmt.insert.run(endpointRows.values(newEndpointRecord(endpoint)));
    writeAudit(audit);
    return endpointRows.read(stmt.byId.get(endpoint.id) as Row);
  });

  const updateTx = db.transaction((accountId: string, endpointId: string, patch: EndpointPatch, now: number, audit: AuditRecord | undefined) => {
    const row = stmt.ofAccount.get(endpointId, accountId) as Row | undefined;
    if (!row) return undefined;
    const current = endpointRows.read(row);
    if (!meetsForwardPrecondition(current, forwardPrecondition(patch))) {
      throw forwardRequired(patch.operatingMode ?? current.operatingMode);
    }
    stmt.update.run(...patched.values(applyEndpointPatch(current, patch, now)), row.key);
    writeAudit(audit);
    return endpointRows.read(stmt.byId.get(endpointId) as Row);
  });

  return {
    // A duplicate slug fails the UNIQUE (account_id, slug) constraint: errors.ts names it.
    async createEndpoint(endpoint, quota, audit) {
      return createTx.immediate(endpoint, quota, audit);
    },

    async getEndpoint(endpointId, accountId) {
      const row = (accountId === undefined ? stmt.byId.get(endpointId) : stmt.ofAccount.get(endpointId, accountId)) as Row | undefined;
      return row ? endpointRows.read(row) : undefined;
    },

    async listEndpoints(accountId, page) {
      const rows = page ? stmt.page.all(accountId, page.after ?? "", page.limit) : stmt.list.all(accountId);
      return (rows as Row[]).map((row) => endpointRows.read(row));
    },

    async deleteEndpoint(accountId, endpointId, audit) {
      return deleteTx.immediate(accountId, endpointId, audit);
    },

    async updateEndpoint(accountId, endpointId, patch, now, audit): Promise<EndpointRecord | undefined> {
      return updateTx.immediate(accountId, endpointId, patch, now, audit);
    },

    async countRejections(counts) {
      if (counts.length > 0) rejectionsTx.immediate(counts);
    },
  };
}
