import { endpointQuotaExceeded, forwardPrecondition, forwardRequired, newEndpointRecord, type AuditRecord, type CatalogStore } from "@whc/catalog-core";
import type { CatalogCollections, InTransaction } from "./connection.js";
import { BY_ID, endpointOfAccount, endpointPageFilter, endpointPatchUpdate, endpointQuotaGuard, forwardPreconditionFilter, rejectionsUpdate } from "./documents.js";
import { auditLogDocs, endpointDocs, type AnyDoc } from "./records.js";
import type { WithAudit } from "./audit.js";
import { endpointDedupeKeysFilter } from "./dedupe-documents.js";

export type EndpointMethods = Pick<
  CatalogStore,
  "createEndpoint" | "getEndpoint" | "listEndpoints" | "deleteEndpoint" | "updateEndpoint" | "countRejections"
>;

/**
 * Endpoints; deleting one deletes its events, schemas, deduplication keys and redelivery jobs with it; an update is one atomic pipeline update.
 * A create under the quota counts and inserts in one transaction that first moves the
 * account's document (endpointQuotaGuard, ADR 0036); within one process creates also take
 * turns, which is what keeps the quota on a standalone server (no transactions: one catalog
 * process, docs/operations.md).
 */
export function createEndpoints(
  { accounts, endpoints, events, auditLog, schemas, dedupeKeys, redeliveryJobs, breakers }: Pick<CatalogCollections, "accounts" | "endpoints" | "events" | "auditLog" | "schemas" | "dedupeKeys" | "redeliveryJobs" | "breakers">,
  inTransaction: InTransaction,
  withAudit: WithAudit,
): EndpointMethods {
  let createChain: Promise<unknown> = Promise.resolve();

  async function createUnderQuota(doc: AnyDoc, quota: number, audit: AuditRecord | undefined): Promise<void> {
    // The entry joins the quota's transaction (WithAudit's own opens none inside it).
    await inTransaction(async (session) => {
      const guard = endpointQuotaGuard(doc.accountId as string);
      await accounts.updateOne(guard.filter, guard.update, { session });
      const count = await endpoints.countDocuments(endpointPageFilter(doc.accountId as string), { session, limit: quota });
      if (count >= quota) throw endpointQuotaExceeded(quota);
      await endpoints.insertOne(doc, { session });
      if (audit) await auditLog.insertOne(auditLogDocs.write(audit), { session });
    });
  }

  return {
    // A duplicate slug fails the unique (accountId, slug) index: errors.ts names it.
    async createEndpoint(endpoint, quota, audit) {
      const doc = endpointDocs.write(newEndpointRecord(endpoint));
      if (quota === undefined) {
        await withAudit(audit, (session) => endpoints.insertOne(doc, { session }));
      } else {
        const run = createChain.then(() => createUnderQuota(doc, quota, audit));
        createChain = run.catch(() => undefined);
        await run;
      }
      return endpointDocs.read(doc);
    },

    async getEndpoint(endpointId, accountId) {
      const d = await endpoints.findOne(accountId === undefined ? { _id: endpointId } : { _id: endpointId, accountId });
      return d ? endpointDocs.read(d) : undefined;
    },

    async listEndpoints(accountId, page) {
      const found = endpoints.find(endpointPageFilter(accountId, page?.after)).sort(BY_ID);
      const docs = await (page ? found.limit(page.limit) : found).toArray();
      return docs.map((d) => endpointDocs.read(d));
    },

    // The forward rule is part of the filter: when it finds nothing, a second read tells an
    // unknown endpoint (undefined) from one the rule refuses.
    async updateEndpoint(accountId, endpointId, patch, now, audit) {
      const ofAccount = endpointOfAccount(accountId, endpointId);
      const guard = forwardPreconditionFilter(forwardPrecondition(patch));
      const d =
        guard &&
        (await withAudit(
          audit,
          (session) => endpoints.findOneAndUpdate({ ...ofAccount, ...guard }, endpointPatchUpdate(patch, now), { returnDocument: "after", session }),
          (updated) => updated !== null,
        ));
      if (d) return endpointDocs.read(d);
      const current = await endpoints.findOne(ofAccount);
      if (!current) return undefined;
      throw forwardRequired(patch.operatingMode ?? endpointDocs.read(current).operatingMode);
    },

    async countRejections(counts) {
      if (counts.length === 0) return;
      await endpoints.bulkWrite(
        counts.map(({ endpointId, count }) => ({ updateOne: { filter: { _id: endpointId }, update: rejectionsUpdate(count) } })),
        { ordered: false },
      );
    },

    async deleteEndpoint(accountId, endpointId, audit) {
      return inTransaction(async (session) => {
        const res = await endpoints.deleteOne({ _id: endpointId, accountId }, { session });
        if (res.deletedCount === 0) return false;
        await events.deleteMany({ endpointId }, { session });
        await schemas.deleteMany({ endpointId }, { session });
        await dedupeKeys.deleteMany(endpointDedupeKeysFilter(endpointId), { session });
        await redeliveryJobs.deleteMany({ endpointId }, { session });
        await breakers.deleteMany({ endpointId }, { session });
        if (audit) await auditLog.insertOne(auditLogDocs.write(audit), { session });
        return true;
      });
    },
  };
}
