import type { CatalogStore } from "@whc/catalog-core";
import type { CatalogCollections } from "./connection.js";
import { removedCounterUpdate } from "./documents.js";
import { endpointDedupeKeysFilter, expiredDedupeKeysFilter } from "./dedupe-documents.js";

/** Events deleted per round: a purge never holds much of the server at once. */
const PURGE_CHUNK = 2000;

/**
 * The retention purge: old events go in chunks, each endpoint noting how many it lost; then the
 * deduplication keys whose window has ended (ADR 0083).
 */
export function createRetention({ endpoints, events, dedupeKeys }: Pick<CatalogCollections, "endpoints" | "events" | "dedupeKeys">): Pick<CatalogStore, "purgeEvents" | "countDedupeKeys"> {
  return {
    async countDedupeKeys(endpointId) {
      return dedupeKeys.countDocuments(endpointDedupeKeysFilter(endpointId));
    },
    async purgeEvents(before, now) {
      let total = 0;
      for (;;) {
        const batch = await events
          .find({ receivedAt: { $lt: before } }, { projection: { _id: 1, endpointId: 1 } })
          .sort({ receivedAt: 1 })
          .limit(PURGE_CHUNK)
          .toArray();
        if (batch.length === 0) break;
        const res = await events.deleteMany({ _id: { $in: batch.map((d) => d._id) } });
        total += res.deletedCount;
        const perEndpoint = new Map<string, number>();
        for (const d of batch) perEndpoint.set(d.endpointId, (perEndpoint.get(d.endpointId) ?? 0) + 1);
        for (const [endpointId, n] of perEndpoint) await endpoints.updateOne({ _id: endpointId }, removedCounterUpdate(n, now));
        if (batch.length < PURGE_CHUNK) break;
      }
      await dedupeKeys.deleteMany(expiredDedupeKeysFilter(now));
      return total;
    },
  };
}
