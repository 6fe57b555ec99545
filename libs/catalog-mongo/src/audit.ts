import type { ClientSession, Collection } from "mongodb";
import type { AuditQuery, AuditRecord, CatalogStore } from "@whc/catalog-core";
import type { CatalogCollections, InTransaction } from "./connection.js";
import { auditLogDocs, type AnyDoc } from "./records.js";
import { beyondPair, type Doc } from "./documents.js";

export type AuditMethods = Pick<CatalogStore, "recordAudit" | "listAudit" | "purgeAudit">;

export const AUDIT_NEWEST_FIRST = { at: -1, _id: -1 } as const;
export const AUDIT_OLDEST_FIRST = { at: 1, _id: 1 } as const;


/** An account's entries matching the query's filters, between its cursors. */
export function auditPageFilter(q: Omit<AuditQuery, "limit">): Doc {
  const at: Doc = {};
  if (q.fromMs !== undefined) at.$gte = q.fromMs;
  if (q.toMs !== undefined) at.$lt = q.toMs;
  const bounds = [q.before && beyondPair("at", "$lt", q.before.at, q.before.id), q.after && beyondPair("at", "$gt", q.after.at, q.after.id)].filter(
    (b): b is Doc => b !== undefined,
  );
  return {
    accountId: q.accountId,
    ...(Object.keys(at).length > 0 ? { at } : {}),
    ...(q.action !== undefined ? { action: q.action } : {}),
    ...(q.keyId !== undefined ? { keyId: q.keyId } : {}),
    ...(q.endpointId !== undefined ? { endpointId: q.endpointId } : {}),
    ...(q.eventId !== undefined ? { eventId: q.eventId } : {}),
    ...(bounds.length > 0 ? { $and: bounds } : {}),
  };
}

/**
 * Runs an audited action and writes its entry when `took` says the action took place (ADR
 * 0053): in one transaction where the server runs them, so both commit or neither; on a
 * standalone server the entry is written right after the action, before the caller is
 * answered, and a crash between the two loses the entry, never the refusal of a failed write.
 */
export type WithAudit = <T>(entry: AuditRecord | undefined, work: (session?: ClientSession) => Promise<T>, took?: (result: T) => boolean) => Promise<T>;

export function createWithAudit(audits: Collection<AnyDoc>, inTransaction: InTransaction): WithAudit {
  return async (entry, work, took = () => true) => {
    if (!entry) return work();
    return inTransaction(async (session) => {
      const result = await work(session);
      if (took(result)) await audits.insertOne(auditLogDocs.write(entry), { session });
      return result;
    });
  };
}

/** Entries deleted per round: a purge never holds much of the server at once. */
const PURGE_CHUNK = 2000;

/** The audit log's own calls; entries are otherwise written by the actions (WithAudit). */
export function createAuditLog({ auditLog }: Pick<CatalogCollections, "auditLog">): AuditMethods {
  return {
    async recordAudit(entry) {
      await auditLog.insertOne(auditLogDocs.write(entry));
    },

    async listAudit(q) {
      if (q.after) {
        const docs = await auditLog.find(auditPageFilter(q)).sort(AUDIT_OLDEST_FIRST).limit(q.limit).toArray();
        docs.reverse();
        const oldest = docs.at(-1);
        const older = oldest && (await auditLog.findOne(auditPageFilter({ ...q, after: undefined, before: { at: oldest.at as number, id: oldest._id } }), { projection: { _id: 1 } }));
        return { entries: docs.map((d) => auditLogDocs.read(d)), hasOlder: Boolean(older) };
      }
      const docs = await auditLog.find(auditPageFilter(q)).sort(AUDIT_NEWEST_FIRST).limit(q.limit + 1).toArray();
      return { entries: docs.slice(0, q.limit).map((d) => auditLogDocs.read(d)), hasOlder: docs.length > q.limit };
    },

    async purgeAudit(before) {
      let total = 0;
      for (;;) {
        const batch = await auditLog.find({ at: { $lt: before } }, { projection: { _id: 1 } }).sort({ at: 1 }).limit(PURGE_CHUNK).toArray();
        if (batch.length === 0) return total;
        total += (await auditLog.deleteMany({ _id: { $in: batch.map((d) => d._id) } })).deletedCount;
        if (batch.length < PURGE_CHUNK) return total;
      }
    },
  };
}
