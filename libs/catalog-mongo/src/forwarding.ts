import type { CatalogStore } from "@whc/catalog-core";
import type { DeliveryState } from "@whc/api-model";
import type { CatalogCollections } from "./connection.js";
import { CLAIM_ORDER, OUTBOX_STATS_PIPELINE, proxyAnswerUpdate, beginUpdate, eventRefFilter, nextDueFilter, recordUpdate } from "./delivery-documents.js";
import { createMongoDeliveryControl } from "./delivery-control.js";
import { deliveriesFromDoc } from "./records.js";
import type { WithAudit } from "./audit.js";

export type ForwardMethods = Pick<
  CatalogStore,
  | "claimDeliveries"
  | "beginForwardAttempt"
  | "recordForwardAttempt"
  | "nextDueAt"
  | "outboxStats"
  | "recordProxyAnswer"
  | "destinationBreakers"
  | "settleDestinations"
  | "activeBreakers"
>;

/**
 * The relay outbox on the events' `deliveries` (one per destination, design §17). A claim
 * takes each delivery by a conditional findOneAndUpdate, atomic on its document, after delivery
 * control (design §18) let it go (delivery-control.ts): any number of catalog processes on one
 * database never take the same delivery twice, and each claim moves the attempt counter it
 * answers. Begin and record are single-document pipeline updates that move the event's
 * aggregate state with the delivery, so they need no transaction either.
 */
export function createForwarding(
  collections: Pick<CatalogCollections, "events" | "endpoints" | "breakers">,
  withAudit: WithAudit,
  countJobEnded: (jobId: string, outcome: "done" | "failed", at: number) => Promise<void>,
): ForwardMethods {
  const { events } = collections;
  const control = createMongoDeliveryControl(collections);
  return {
    async claimDeliveries(owner, now, claimMs, limit) {
      return control.claim(owner, now, claimMs, limit);
    },

    async destinationBreakers(endpointIds) {
      return control.breakers(endpointIds);
    },

    async settleDestinations(endpointId, now) {
      await control.settle(endpointId, now);
    },

    async activeBreakers() {
      return control.active();
    },

    async beginForwardAttempt(ref, target) {
      const d = await events.findOneAndUpdate(eventRefFilter(ref), beginUpdate(ref, target), {
        returnDocument: "after",
        projection: { "deliveries.destinationId": 1, "deliveries.started": 1 },
      });
      if (!d) return undefined;
      return ((d.deliveries ?? []) as { destinationId: string; started: number }[]).find((x) => x.destinationId === ref.destinationId)?.started;
    },

    async recordForwardAttempt(ref, attempt, transition, audit, now = Date.now()) {
      const recording = await control.recording(ref, attempt, transition, now);
      const d = await withAudit(
        audit,
        (session) =>
          events.findOneAndUpdate(eventRefFilter(ref), recordUpdate(ref, attempt, recording.transition), {
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
      const breaker = await recording.after();
      const delivery = deliveriesFromDoc(d).find((x) => x.destinationId === ref.destinationId);
      return delivery && { delivery, forwardState: d.forwardState as DeliveryState, ...(breaker ? { breaker } : {}) };
    },

    async nextDueAt(after) {
      const next = await events.find(nextDueFilter(after), { projection: { outboxAt: 1 } }).sort(CLAIM_ORDER).limit(1).next();
      const due = next?.outboxAt as number | undefined;
      const probe = await control.nextProbeAfter(after);
      return due === undefined || probe === undefined ? (due ?? probe) : Math.min(due, probe);
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
