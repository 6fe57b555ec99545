import type Database from "better-sqlite3";
import type { CatalogStore } from "@whc/catalog-core";
import { endpointRows, type Row } from "./rows.js";

export type EndpointMethods = Pick<CatalogStore, "createEndpoint" | "getEndpoint" | "listEndpoints" | "deleteEndpoint">;

/** Endpoints; deleting one deletes its events (rows, bodies and search postings) with it. */
export function createEndpoints(db: Database.Database): EndpointMethods {
  const stmt = {
    insert: db.prepare(endpointRows.insertSql()),
    byId: db.prepare("SELECT * FROM endpoints WHERE id = ?"),
    ofAccount: db.prepare("SELECT * FROM endpoints WHERE id = ? AND account_id = ?"),
    list: db.prepare("SELECT * FROM endpoints WHERE account_id = ? ORDER BY created_at, id"),
    delete: db.prepare("DELETE FROM endpoints WHERE id = ? AND account_id = ?"),
    deleteSearch: db.prepare("DELETE FROM event_search WHERE rowid IN (SELECT seq FROM events WHERE endpoint_id = ?)"),
    deleteBodies: db.prepare("DELETE FROM event_bodies WHERE seq IN (SELECT seq FROM events WHERE endpoint_id = ?)"),
    deleteEvents: db.prepare("DELETE FROM events WHERE endpoint_id = ?"),
  };

  const deleteTx = db.transaction((accountId: string, endpointId: string) => {
    if (!stmt.ofAccount.get(endpointId, accountId)) return false;
    stmt.deleteSearch.run(endpointId);
    stmt.deleteBodies.run(endpointId);
    stmt.deleteEvents.run(endpointId);
    stmt.delete.run(endpointId, accountId);
    return true;
  });

  return {
    // A duplicate slug fails the UNIQUE (account_id, slug) constraint: errors.ts names it.
    async createEndpoint(endpoint) {
      stmt.insert.run(endpointRows.values(endpoint));
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
      return deleteTx(accountId, endpointId);
    },
  };
}
