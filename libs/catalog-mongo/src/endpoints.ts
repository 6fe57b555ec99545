import { forwardPrecondition, forwardRequired, newEndpointRecord, type CatalogStore } from "@whc/catalog-core";
import type { CatalogCollections, InTransaction } from "./connection.js";
import { endpointOfAccount, endpointPatchUpdate, forwardPreconditionFilter } from "./documents.js";
import { endpointDocs } from "./records.js";

export type EndpointMethods = Pick<
  CatalogStore,
  "createEndpoint" | "getEndpoint" | "listEndpoints" | "deleteEndpoint" | "updateEndpoint"
>;

/** Endpoints; deleting one deletes its events with it; an update is one atomic pipeline update. */
export function createEndpoints(
  { endpoints, events }: Pick<CatalogCollections, "endpoints" | "events">,
  inTransaction: InTransaction,
): EndpointMethods {
  return {
    // A duplicate slug fails the unique (accountId, slug) index: errors.ts names it.
    async createEndpoint(endpoint) {
      const doc = endpointDocs.write(newEndpointRecord(endpoint));
      await endpoints.insertOne(doc);
      return endpointDocs.read(doc);
    },

    async getEndpoint(endpointId, accountId) {
      const d = await endpoints.findOne(accountId === undefined ? { _id: endpointId } : { _id: endpointId, accountId });
      return d ? endpointDocs.read(d) : undefined;
    },

    async listEndpoints(accountId) {
      const docs = await endpoints.find({ accountId }).sort({ createdAt: 1, _id: 1 }).toArray();
      return docs.map((d) => endpointDocs.read(d));
    },

    // The forward rule is part of the filter: when it finds nothing, a second read tells an
    // unknown endpoint (undefined) from one the rule refuses.
    async updateEndpoint(accountId, endpointId, patch, now) {
      const ofAccount = endpointOfAccount(accountId, endpointId);
      const guard = forwardPreconditionFilter(forwardPrecondition(patch));
      const d = guard && (await endpoints.findOneAndUpdate({ ...ofAccount, ...guard }, endpointPatchUpdate(patch, now), { returnDocument: "after" }));
      if (d) return endpointDocs.read(d);
      const current = await endpoints.findOne(ofAccount);
      if (!current) return undefined;
      throw forwardRequired(patch.operatingMode ?? endpointDocs.read(current).operatingMode);
    },

    async deleteEndpoint(accountId, endpointId) {
      return inTransaction(async (session) => {
        const res = await endpoints.deleteOne({ _id: endpointId, accountId }, { session });
        if (res.deletedCount === 0) return false;
        await events.deleteMany({ endpointId }, { session });
        return true;
      });
    },
  };
}
