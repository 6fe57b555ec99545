import type { CatalogStore } from "@whc/catalog-core";
import type { CatalogCollections } from "./connection.js";
import { removedCounterUpdate } from "./documents.js";

/** Events deleted per round: a purge never holds much of the server at once. */
const PURGE_CHUNK = 2000;

/** The retention purge: old events go in chunks, each endpoint noting how many it lost. */
export function createRetention({ endpoints, events }: Pick<CatalogCollections, "endpoints" | "events">): Pick<CatalogStore, "purgeEvents"> {
  return {
    async purgeEvents(before, now) {
      let total = 0;
      for (;;) {
        const batch = await events
          .find({ receivedAt: { $lt: before } }, { projection: { _id: 1, endpointId: 1 } })
          .sort({ receivedAt: 1 })
          .limit(PURGE_CHUNK)
          .toArray();
        if (batch.length === 0) return total;
        const res = await events.deleteMany({ _id: { $in: batch.map((d) => d._id) } });
        total += res.deletedCount;
        const perEndpoint = new Map<string, number>();
        for (const d of batch) perEndpoint.set(d.endpointId, (perEndpoint.get(d.endpointId) ?? 0) + 1);
        for (const [endpointId, n] of perEndpoint) await endpoints.updateOne({ _id: endpointId }, removedCounterUpdate(n, now));
        if (batch.length < PURGE_CHUNK) return total;
      }
    },
  };
}
