import type { CatalogStore, DeliveryClaim } from "@whc/catalog-core";
import type { DeliveryState } from "@whc/api-model";
import type { CatalogCollections } from "./connection.js";
import { CLAIM_ORDER, OUTBOX_STATS_PIPELINE, proxyAnswerUpdate, beginUpdate, claimFilter, claimUpdate, eventRefFilter, nextDueFilter, recordUpdate } from "./delivery-documents.js";
import { deliveriesFromDoc } from "./records.js";
import type { WithAudit } from "./audit.js";

export type ForwardMethods = Pick<CatalogStore, "claimDeliveries" | "beginForwardAttempt" | "recordForwardAttempt" | "nextDueAt" | "outboxStats" | "recordProxyAnswer">;

/**
 * The relay outbox on the events' `deliveries` (one per destination, design §17). A claim is
 * one findOneAndUpdate per delivery, atomic on its document: any number of catalog processes
 * on one database never take the same delivery twice, and each claim moves the attempt
 * counter it answers. Begin and record are single-document pipeline updates that move the
 * event's aggregate state with the delivery, so they need no transaction either.
 */
export function createForwarding(
  { events }: Pick<CatalogCollections, "events">,
  withAudit: WithAudit,
  countJobEnded: (jobId: string, outcome: "done" | "failed", at: number) => Promise<void>,
): ForwardMethods {
  return {
    async claimDeliveries(owner, now, claimMs, limit) {
      const claims: DeliveryClaim[] = [];
      while (claims.length < limit) {
        const d = await events.findOneAndUpdate(claimFilter(now), claimUpdate(owner, now, claimMs), {
          sort: CLAIM_ORDER,
          returnDocument: "after",
          projection: { accountId: 1, endpointId: 1, lastClaim: 1 },
        });
        if (!d) break;
        const claim: DeliveryClaim = { accountId: d.accountId, endpointId: d.endpointId, eventId: d._id, destinationId: d.lastClaim.destinationId, attempt: d.lastClaim.attempt };
        // A delivery a bulk redelivery put back: its attempts are the job's (ADR 0089).
        claims.push(typeof d.lastClaim.bulkJobId === "string" ? { ...claim, bulkJobId: d.lastClaim.bulkJobId, attemptBase: d.lastClaim.attemptBase ?? 0 } : claim);
      }
      return claims;
    },

    async beginForwardAttempt(ref, target) {
      const d = await events.findOneAndUpdate(eventRefFilter(ref), beginUpdate(ref, target), {
        returnDocument: "after",
        projection: { "deliveries.destinationId": 1, "deliveries.started": 1 },
      });
      if (!d) return undefined;
      return ((d.deliveries ?? []) as { destinationId: string; started: number }[]).find((x) => x.destinationId === ref.destinationId)?.started;
    },

    async recordForwardAttempt(ref, attempt, transition, audit) {
      const d = await withAudit(
        audit,
        (session) =>
          events.findOneAndUpdate(eventRefFilter(ref), recordUpdate(ref, attempt, transition), {
            returnDocument: "after",
            projection: { deliveries: 1, forwardState: 1, bulkEnded: 1 },
            session,
          }),
        (recorded) => recorded !== null,
      );
      if (!d) return undefined;
      // A delivery a bulk redelivery put back, ended by this attempt: its job counts it, right
      // after the event's update (a crash between loses the count; the job still ends, ADR 0089).
      const ended = d.bulkEnded as { jobId: string; outcome: "done" | "failed" } | null | undefined;
      if (ended) await countJobEnded(ended.jobId, ended.outcome, attempt.at + attempt.durationMs);
      const delivery = deliveriesFromDoc(d).find((x) => x.destinationId === ref.destinationId);
      return delivery && { delivery, forwardState: d.forwardState as DeliveryState };
    },

    async nextDueAt(after) {
      const next = await events.find(nextDueFilter(after), { projection: { outboxAt: 1 } }).sort(CLAIM_ORDER).limit(1).next();
      return next?.outboxAt as number | undefined;
    },

    async outboxStats() {
      const [stats] = await events.aggregate<{ pending: number; oldest: number | null }>(OUTBOX_STATS_PIPELINE).toArray();
      return { pending: stats?.pending ?? 0, oldestDueAt: stats?.oldest ?? undefined };
    },

    async recordProxyAnswer(ref, responseCode, forwardFailed) {
      const { matchedCount } = await events.updateOne(eventRefFilter(ref), proxyAnswerUpdate(responseCode, forwardFailed));
      return matchedCount > 0;
    },
  };
}
