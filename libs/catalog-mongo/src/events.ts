import type { CatalogStore } from "@whc/catalog-core";
import type { CatalogCollections, InTransaction } from "./connection.js";
import { markReadFilter, removedCounterUpdate } from "./documents.js";
import { eventFromDoc } from "./records.js";

export type EventMethods = Pick<CatalogStore, "getEvent" | "deleteEvent">;

/** One event at a time: read it whole (marking it read), delete it. */
export function createEvents(
  { endpoints, events }: Pick<CatalogCollections, "endpoints" | "events">,
  inTransaction: InTransaction,
): EventMethods {
  return {
    async getEvent(accountId, endpointId, eventId, markReadAt) {
      if (markReadAt !== undefined) await events.updateOne(markReadFilter(accountId, endpointId, eventId), { $set: { readAt: markReadAt } });
      const d = await events.findOne({ _id: eventId, endpointId, accountId }, { projection: { tokens: 0 } });
      return d ? eventFromDoc(d) : undefined;
    },

    async deleteEvent(accountId, endpointId, eventId) {
      return inTransaction(async (session) => {
        const res = await events.deleteOne({ _id: eventId, endpointId, accountId }, { session });
        if (res.deletedCount === 0) return false;
        await endpoints.updateOne({ _id: endpointId }, removedCounterUpdate(1), { session });
        return true;
      });
    },
  };
}
