import type { CatalogStore, DeliveryClaim } from "@whc/catalog-core";
import type { CatalogCollections } from "./connection.js";
import { CLAIM_ORDER, OUTBOX_FILTER, proxyAnswerUpdate, beginUpdate, claimFilter, claimUpdate, eventRefFilter, nextDueFilter, recordUpdate } from "./delivery-documents.js";
import { forwardFromDoc } from "./records.js";
import type { WithAudit } from "./audit.js";

export type ForwardMethods = Pick<CatalogStore, "claimDeliveries" | "beginForwardAttempt" | "recordForwardAttempt" | "nextDueAt" | "outboxStats" | "recordProxyAnswer">;

/**
 * The relay outbox on the events' `forward` subdocuments. A claim is one findOneAndUpdate per
 * delivery, atomic on its document: any number of catalog processes on one database never
 * take the same delivery twice, and each claim moves the attempt counter it answers. Begin
 * and record are single-document pipeline updates, so they need no transaction either.
 */
export function createForwarding({ events }: Pick<CatalogCollections, "events">, withAudit: WithAudit): ForwardMethods {
  return {
    async claimDeliveries(owner, now, claimMs, limit) {
      const claims: DeliveryClaim[] = [];
      while (claims.length < limit) {
        const d = await events.findOneAndUpdate(claimFilter(now), claimUpdate(owner, now, claimMs), {
          sort: CLAIM_ORDER,
          returnDocument: "after",
          projection: { accountId: 1, endpointId: 1, "forward.started": 1 },
        });
        if (!d) break;
        claims.push({ accountId: d.accountId, endpointId: d.endpointId, eventId: d._id, attempt: d.forward.started });
      }
      return claims;
    },

    async beginForwardAttempt(ref, target) {
      const d = await events.findOneAndUpdate(eventRefFilter(ref), beginUpdate(target), {
        returnDocument: "after",
        projection: { "forward.started": 1 },
      });
      return d ? (d.forward.started as number) : undefined;
    },

    async recordForwardAttempt(ref, attempt, transition, audit) {
      const d = await withAudit(
        audit,
        (session) => events.findOneAndUpdate(eventRefFilter(ref), recordUpdate(attempt, transition), { returnDocument: "after", projection: { forward: 1 }, session }),
        (recorded) => recorded !== null,
      );
      return d ? forwardFromDoc(d) : undefined;
    },

    async nextDueAt(after) {
      const next = await events.find(nextDueFilter(after), { projection: { "forward.nextAttemptAt": 1 } }).sort(CLAIM_ORDER).limit(1).next();
      return next?.forward?.nextAttemptAt as number | undefined;
    },

    async outboxStats() {
      const [pending, oldest] = await Promise.all([
        events.countDocuments(OUTBOX_FILTER),
        events.find(OUTBOX_FILTER, { projection: { "forward.nextAttemptAt": 1 } }).sort(CLAIM_ORDER).limit(1).next(),
      ]);
      return { pending, oldestDueAt: oldest?.forward?.nextAttemptAt as number | undefined };
    },

    async recordProxyAnswer(ref, responseCode, forwardFailed) {
      const { matchedCount } = await events.updateOne(eventRefFilter(ref), proxyAnswerUpdate(responseCode, forwardFailed));
      return matchedCount > 0;
    },
  };
}
