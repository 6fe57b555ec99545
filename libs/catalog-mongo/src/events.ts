import type { CatalogStore } from "@whc/catalog-core";
import type { CatalogCollections, InTransaction } from "./connection.js";
import { markReadFilter, removedCounterUpdate } from "./documents.js";
import { auditLogDocs, eventFromDoc } from "./records.js";

export type EventMethods = Pick<CatalogStore, "getEvent" | "deleteEvent">;

/** One event at a time: read it whole (marking it read), delete it. */
export function createEvents(
  { endpoints, events, auditLog }: Pick<CatalogCollections, "endpoints" | "events" | "auditLog">,
  inTransaction: InTransaction,
): EventMethods {
  return {
    // An audited read writes its entry after the read and before answering: a failed write
    // fails the read, so no body is served without its entry (ADR 0053).
    async getEvent(accountId, endpointId, eventId, markReadAt, audit) {
      if (markReadAt !== undefined) await events.updateOne(markReadFilter(accountId, endpointId, eventId), { $set: { readAt: markReadAt } });
      const d = await events.findOne({ _id: eventId, endpointId, accountId }, { projection: { tokens: 0 } });
      if (d && audit) await auditLog.insertOne(auditLogDocs.write(audit));
      return d ? eventFromDoc(d) : undefined;
    },

    async deleteEvent(accountId, endpointId, eventId, audit) {
      return inTransaction(async (session) => {
        const res = await events.deleteOne({ _id: eventId, endpointId, accountId }, { session });
        if (res.deletedCount === 0) return false;
        await endpoints.updateOne({ _id: endpointId }, removedCounterUpdate(1), { session });
        if (audit) await auditLog.insertOne(auditLogDocs.write(audit), { session });
        return true;
      });
    },
  };
}
