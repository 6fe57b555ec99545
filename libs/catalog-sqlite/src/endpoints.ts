import type Database from "better-sqlite3";
import {
  PATCHED_FIELDS,
  applyEndpointPatch,
  forwardPrecondition,
  forwardRequired,
  meetsForwardPrecondition,
  newEndpointRecord,
  type CatalogStore,
  type EndpointPatch,
  type EndpointRecord,
} from "@whc/catalog-core";
import { endpointRows, type Row } from "./rows.js";

export type EndpointMethods = Pick<
  CatalogStore,
  "createEndpoint" | "getEndpoint" | "listEndpoints" | "deleteEndpoint" | "updateEndpoint"
>;

/**
 * Endpoints; deleting one deletes its events (rows, bodies, search postings and forward
 * attempts) with it. An
 * update writes the patched record (applyEndpointPatch) in an IMMEDIATE transaction: no append
 * can move the sequence counter between its read and its write.
 */
export function createEndpoints(db: Database.Database): EndpointMethods {
  const patched = endpointRows.update(PATCHED_FIELDS, "key = ?");
  const stmt = {
    insert: db.prepare(endpointRows.insertSql()),
    update: db.prepare(patched.sql),
    byId: db.prepare("SELECT * FROM endpoints WHERE id = ?"),
    ofAccount: db.prepare("SELECT * FROM endpoints WHERE id = ? AND account_id = ?"),
    list: db.prepare("SELECT * FROM endpoints WHERE account_id = ? ORDER BY created_at, id"),
    delete: db.prepare("DELETE FROM endpoints WHERE id = ? AND account_id = ?"),
    deleteSearch: db.prepare("DELETE FROM event_search WHERE rowid IN (SELECT seq FROM events WHERE endpoint_id = ?)"),
    deleteBodies: db.prepare("DELETE FROM event_bodies WHERE seq IN (SELECT seq FROM events WHERE endpoint_id = ?)"),
    deleteAttempts: db.prepare("DELETE FROM forward_attempts WHERE seq IN (SELECT seq FROM events WHERE endpoint_id = ?)"),
    deleteEvents: db.prepare("DELETE FROM events WHERE endpoint_id = ?"),
  };

  const deleteTx = db.transaction((accountId: string, endpointId: string) => {
    if (!stmt.ofAccount.get(endpointId, accountId)) return false;
    stmt.deleteSearch.run(endpointId);
    stmt.deleteBodies.run(endpointId);
    stmt.deleteAttempts.run(endpointId);
    stmt.deleteEvents.run(endpointId);
    stmt.delete.run(endpointId, accountId);
    return true;
  });

  const updateTx = db.transaction((accountId: string, endpointId: string, patch: EndpointPatch, now: number) => {
    const row = stmt.ofAccount.get(endpointId, accountId) as Row | undefined;
    if (!row) return undefined;
    const current = endpointRows.read(row);
    if (!meetsForwardPrecondition(current, forwardPrecondition(patch))) {
      throw forwardRequired(patch.operatingMode ?? current.operatingMode);
    }
    stmt.update.run(...patched.values(applyEndpointPatch(current, patch, now)), row.key);
    return endpointRows.read(stmt.byId.get(endpointId) as Row);
  });

  return {
    // A duplicate slug fails the UNIQUE (account_id, slug) constraint: errors.ts names it.
    async createEndpoint(endpoint) {
      stmt.insert.run(endpointRows.values(newEndpointRecord(endpoint)));
      return endpointRows.read(stmt.byId.get(endpoint.id) as Row);
    },

    async getEndpoint(endpointId, accountId) {
      const row = (accountId === undefined ? stmt.byId.get(endpointId) : stmt.ofAccount.get(endpointId, accountId)) as Row | undefined;
      return row ? endpointRows.read(row) : undefined;
    },

    async listEndpoints(accountId) {
      return (stmt.list.all(accountId) as Row[]).map((row) => endpointRows.read(row));
    },

    async deleteEndpoint(accountId, endpointId) {
      return deleteTx.immediate(accountId, endpointId);
    },

    async updateEndpoint(accountId, endpointId, patch, now): Promise<EndpointRecord | undefined> {
      return updateTx.immediate(accountId, endpointId, patch, now);
    },
  };
}
