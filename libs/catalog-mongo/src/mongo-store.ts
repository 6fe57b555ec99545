import { translatingErrors, type CatalogStore } from "@whc/catalog-core";
import { createAlerts } from "./alerts.js";
import { createApiKeys } from "./api-keys.js";
import { createAuditLog, createWithAudit } from "./audit.js";
import { connectCatalog, createInTransaction } from "./connection.js";
import type { Doc } from "./documents.js";
import { createEndpoints } from "./endpoints.js";
import { translateMongoError } from "./errors.js";
import { createEventAppend } from "./event-append.js";
import { createEventSearch } from "./event-search.js";
import { createEvents } from "./events.js";
import { createForwarding } from "./forwarding.js";
import { createListeners } from "./listeners.js";
import { createReplay } from "./replay.js";
import { createRetention } from "./retention.js";
import { createSchemas } from "./schemas.js";
import { createRedeliveries } from "./redeliveries.js";

export interface MongoStoreOptions {
  uri: string;
  /** Default: the database named in the URI, else "webhook_capture". */
  dbName?: string;
  /** "majority" (default) or a number of members. */
  writeConcern?: string;
  appName?: string;
  serverSelectionTimeoutMS?: number;
}

/**
 * The catalog on MongoDB. Appends are stamped per endpoint and run in a transaction on replica
 * sets and sharded clusters, where any number of catalog processes may append at once (ADR
 * 0008); a standalone server gets the endpoint update plus an ordered insert, safe for one
 * catalog process.
 */
export async function openMongoStore(options: MongoStoreOptions): Promise<CatalogStore> {
  const connection = await connectCatalog(options).catch((err: unknown) => {
    throw translateMongoError(err, "open");
  });
  const { client, db, collections } = connection;
  const inTransaction = createInTransaction(connection);
  const withAudit = createWithAudit(collections.auditLog, inTransaction);
  const { countJobEnded, ...redeliveries } = createRedeliveries(collections, inTransaction);

  const store: CatalogStore = {
    kind: "mongodb",
    ...createApiKeys(collections, inTransaction, withAudit),
    ...createEndpoints(collections, inTransaction, withAudit),
    ...createEventAppend(collections, inTransaction),
    ...createEventSearch(collections),
    ...createEvents(collections, inTransaction),
    ...createReplay(collections, withAudit),
    ...createRetention(collections),
    ...createForwarding(collections, withAudit, countJobEnded),
    ...createAuditLog(collections),
    ...createListeners(collections, inTransaction),
    ...createAlerts(collections, inTransaction, withAudit),
    ...createSchemas(collections),
    ...redeliveries,

    async ping() {
      try {
        await db.command({ ping: 1 });
        return true;
      } catch {
        return false;
      }
    },

    async close() {
      await client.close();
    },
  };
  return translatingErrors(store, translateMongoError);
}

export type { Doc };
