import type { CatalogStore, ListenerRecord } from "@whc/catalog-core";
import type { CatalogCollections, InTransaction } from "./connection.js";
import { newerThan, type Doc } from "./documents.js";
import type { AnyDoc } from "./records.js";

export type ListenerMethods = Pick<CatalogStore, "countEventsAfter" | "putListener" | "listListeners" | "deleteListener">;

/** One document per listener, keyed by its endpoint and id (ids are the listeners' own choice). */
export const listenerKey = (endpointId: string, listenerId: string) => `${endpointId}:${listenerId}`;

/**
 * Every save of an endpoint's listener writes this document first, in its transaction: two saves
 * of new listeners then conflict (one is retried), so the count that admits a listener is never
 * read by both (as endpointQuotaGuard does for the endpoint quota, ADR 0036). It has no
 * `endpointId` field and no `expiresAt`: no listener query finds it.
 */
export function listenerGuard(endpointId: string, now: number): { filter: Doc; update: Doc } {
  return { filter: { _id: `guard:${endpointId}` }, update: { $set: { guardedAt: now } } };
}

/** The endpoint's listeners still alive at `now`. */
export function liveListenersFilter(accountId: string, endpointId: string, now: number): Doc {
  return { endpointId, accountId, expiresAt: { $gt: now } };
}

/** Every listener (of any endpoint) whose lifetime ended at or before `now`. */
export function expiredListenersFilter(now: number): Doc {
  return { expiresAt: { $lte: now } };
}

export function listenerDoc(l: ListenerRecord): AnyDoc {
  return {
    _id: listenerKey(l.endpointId, l.id),
    listenerId: l.id,
    accountId: l.accountId,
    endpointId: l.endpointId,
    host: l.host,
    startedAt: l.startedAt,
    lastSeenAt: l.lastSeenAt,
    expiresAt: l.expiresAt,
    ...(l.cursor ? { cursorAt: l.cursor.receivedAt, cursorId: l.cursor.id } : {}),
    lagEvents: l.lagEvents,
    lagRunSince: l.lagRunSince,
    ...(l.lastError !== undefined ? { lastError: l.lastError } : {}),
  };
}

export function listenerOf(d: AnyDoc): ListenerRecord {
  return {
    id: d.listenerId as string,
    accountId: d.accountId as string,
    endpointId: d.endpointId as string,
    host: d.host as string,
    startedAt: d.startedAt as number,
    lastSeenAt: d.lastSeenAt as number,
    expiresAt: d.expiresAt as number,
    cursor: typeof d.cursorAt === "number" && typeof d.cursorId === "string" ? { receivedAt: d.cursorAt, id: d.cursorId } : undefined,
    lagEvents: d.lagEvents as number,
    lagRunSince: d.lagRunSince as number,
    lastError: (d.lastError as string | undefined) ?? undefined,
  };
}

/**
 * Listener liveness (design §19; ADR 0062) in the `listeners` collection. Expired documents are
 * deleted by every save (all endpoints' first, outside the transaction, then the endpoint's
 * own inside it), and never read: lists ask for expiresAt after now.
 */
export function createListeners({ events, listeners }: Pick<CatalogCollections, "events" | "listeners">, inTransaction: InTransaction): ListenerMethods {
  return {
    async countEventsAfter(accountId, endpointId, after, limit) {
      return events.countDocuments({ endpointId, accountId, ...newerThan(after) }, { limit });
    },

    async putListener(listener, maxPerEndpoint, now) {
      await listeners.deleteMany(expiredListenersFilter(now));
      const doc = listenerDoc(listener);
      return inTransaction(async (session) => {
        const guard = listenerGuard(listener.endpointId, now);
        await listeners.updateOne(guard.filter, guard.update, { session, upsert: true });
        await listeners.deleteMany({ endpointId: listener.endpointId, ...expiredListenersFilter(now) }, { session });
        const known = await listeners.findOne({ _id: doc._id }, { session, projection: { accountId: 1 } });
        if (known && known.accountId !== listener.accountId) return false;
        if (!known && (await listeners.countDocuments({ endpointId: listener.endpointId }, { session, limit: maxPerEndpoint })) >= maxPerEndpoint) return false;
        await listeners.replaceOne({ _id: doc._id }, doc, { session, upsert: true });
        return true;
      });
    },

    async listListeners(accountId, endpointId, now) {
      const docs = await listeners.find(liveListenersFilter(accountId, endpointId, now)).sort({ startedAt: 1, listenerId: 1 }).toArray();
      return docs.map(listenerOf);
    },

    async deleteListener(accountId, endpointId, listenerId) {
      return (await listeners.deleteOne({ _id: listenerKey(endpointId, listenerId), accountId })).deletedCount > 0;
    },
  };
}
