import { AGGREGATE_ORDER } from "@whc/api-model";
import { OPEN_STATES, isSuccessStatus, type AttemptRecord } from "@whc/catalog-core";
import type { Doc } from "./documents.js";
import { attemptToDoc } from "./records.js";
import type { AttemptTransition, DeliveryRef, EventRef } from "@whc/ports";

/**
 * The relay outbox's filter and update documents. An event keeps its deliveries (design §17:
 * one per destination) in its own document's `deliveries` array, so every change to one of
 * them, and to the event's aggregate `forwardState` and `outboxAt` with it, is one atomic
 * single-document update, on a standalone server too. `outboxAt` is the earliest time one of
 * the event's deliveries can be claimed (catalog-core's claimableAt, the least of them): the
 * outbox's index is on it. Each document here is checked with mingo (delivery-documents.test.ts)
 * against catalog-core's reference functions (claimableAt, claimedDelivery, begunDelivery,
 * recordedDelivery, aggregateOf). A delivery's unset fields are null (deliveryToDoc says why).
 */

/** The outbox's index: partial on events with a delivery in the outbox, in claimable order. */
export const OUTBOX_INDEX = {
  key: { outboxAt: 1, _id: 1 },
  name: "outbox_deliveries",
  partialFilterExpression: { outboxAt: { $type: "number" } },
} as const;
/** The outbox's index before deliveries per destination: dropped once the documents moved. */
export const LEGACY_OUTBOX_INDEX = "outbox";

/** Oldest claimable first. */
export const CLAIM_ORDER = { outboxAt: 1, _id: 1 } as const;

/** Every event with a delivery in the outbox (the index's condition). */
export const OUTBOX_FILTER = { outboxAt: { $type: "number" } } as const;

/** Events with a delivery claimable after `after` (sorted by CLAIM_ORDER, the first says when). */
export function nextDueFilter(after: number): Doc {
  return { outboxAt: { $gt: after } };
}

/** Events with a delivery claimable at `now`. */
export function claimFilter(now: number): Doc {
  return { outboxAt: { $lte: now } };
}

export function eventRefFilter(ref: EventRef): Doc {
  return { _id: ref.eventId, endpointId: ref.endpointId, accountId: ref.accountId };
}

export const DELIVERIES = { $ifNull: ["$deliveries", []] };

/** claimableAt of the delivery `d` (an expression naming it, "$$d"): null outside the outbox. */
export function claimableExpr(d: string): Doc {
  return {
    $cond: [
      { $and: [{ $eq: [`${d}.state`, "pending"] }, { $ne: [{ $ifNull: [`${d}.nextAttemptAt`, null] }, null] }] },
      { $max: [`${d}.nextAttemptAt`, { $ifNull: [`${d}.claimUntil`, 0] }] },
      null,
    ],
  };
}

/** The event's aggregate state (aggregateOf), over its deliveries as they are at this stage. */
function aggregateExpr(): Doc {
  const states = { $map: { input: DELIVERIES, as: "d", in: "$$d.state" } };
  return {
    $switch: {
      branches: [
        { case: { $eq: [{ $size: states }, 0] }, then: null },
        { case: { $or: [{ $in: ["pending", states] }, { $in: ["held", states] }] }, then: "pending" },
        ...AGGREGATE_ORDER.map((s) => ({ case: { $in: [s, states] }, then: s })),
      ],
      default: null,
    },
  };
}

/** The stage every change ends with: the event's aggregate state and when it can next be claimed. */
export const SUMMARIZE = {
  $set: {
    forwardState: aggregateExpr(),
    outboxAt: { $min: { $map: { input: DELIVERIES, as: "d", in: claimableExpr("$$d") } } },
  },
};

/** The deliveries with the one to `destinationId` replaced by `$_n`, or `$_n` added when there is none. */
function withDelivery(destinationId: string): Doc {
  const id = { $literal: destinationId };
  return {
    $cond: [
      { $in: [id, { $map: { input: DELIVERIES, as: "d", in: "$$d.destinationId" } }] },
      { $map: { input: DELIVERIES, as: "d", in: { $cond: [{ $eq: ["$$d.destinationId", id] }, "$_n", "$$d"] } } },
      { $concatArrays: [DELIVERIES, ["$_n"]] },
    ],
  };
}

/** `_d`: the event's delivery to `destinationId` as it is, or, when there is none, one never forwarded. */
function currentDelivery(destinationId: string): Doc {
  const none = { destinationId, state: null, target: "", nextAttemptAt: null, claimOwner: null, claimUntil: null, started: 0, spared: 0, attempts: [] };
  const found = { $filter: { input: DELIVERIES, as: "d", cond: { $eq: ["$$d.destinationId", { $literal: destinationId }] } } };
  return { $ifNull: [{ $arrayElemAt: [found, 0] }, { $literal: none }] };
}

/**
 * A claim (findOneAndUpdate with claimFilter and CLAIM_ORDER): the first of the event's
 * deliveries claimable at `now` takes the next attempt number and is hidden until now +
 * claimMs; `lastClaim` answers which one, with its number.
 */
export function claimUpdate(owner: string, now: number, claimMs: number): Doc[] {
  const claimable = { $and: [{ $ne: [claimableExpr("$$d"), null] }, { $lte: [claimableExpr("$$d"), now] }] };
  return [
    { $set: { _c: { $arrayElemAt: [{ $filter: { input: DELIVERIES, as: "d", cond: claimable } }, 0] } } },
    {
      $set: {
        _n: { $mergeObjects: ["$_c", { started: { $add: ["$_c.started", 1] }, claimOwner: { $literal: owner }, claimUntil: now + claimMs }] },
      },
    },
    {
      $set: {
        deliveries: { $map: { input: DELIVERIES, as: "d", in: { $cond: [{ $eq: ["$$d.destinationId", "$_c.destinationId"] }, "$_n", "$$d"] } } },
        // A delivery a bulk redelivery put back also answers its job and attempt base (absent otherwise, ADR 0089).
        lastClaim: { destinationId: "$_n.destinationId", attempt: "$_n.started", bulkJobId: "$_n.bulkJobId", attemptBase: "$_n.attemptBase" },
      },
    },
    SUMMARIZE,
    { $unset: ["_c", "_n"] },
  ];
}

/** The next attempt number of a delivery outside the outbox; a first attempt creates the delivery (begunDelivery). */
export function beginUpdate(ref: DeliveryRef, target: string): Doc[] {
  return [
    { $set: { _d: currentDelivery(ref.destinationId) } },
    {
      $set: {
        _n: {
          $mergeObjects: [
            "$_d",
            {
              state: { $ifNull: ["$_d.state", "pending"] },
              target: { $cond: [{ $eq: ["$_d.state", null] }, { $literal: target }, "$_d.target"] },
              started: { $add: ["$_d.started", 1] },
            },
          ],
        },
      },
    },
    { $set: { deliveries: withDelivery(ref.destinationId) } },
    SUMMARIZE,
    { $unset: ["_d", "_n"] },
  ];
}

/** Whether the transition applies, as an expression over the delivery as it was (`$_d`). */
function appliesExpr(attempt: AttemptRecord, transition: AttemptTransition): unknown {
  if (transition.kind === "worker") {
    // The claim (owner, n) still holds: nobody took a later attempt number since.
    return {
      $and: [{ $eq: ["$_d.state", "pending"] }, { $eq: ["$_d.claimOwner", { $literal: transition.owner }] }, { $eq: ["$_d.started", attempt.n] }],
    };
  }
  if (isSuccessStatus(attempt.status)) return true;
  // Not a delivery waiting (in the outbox, or held): it becomes failed.
  return {
    $not: [
      { $or: [{ $and: [{ $eq: ["$_d.state", "pending"] }, { $ne: [{ $ifNull: ["$_d.nextAttemptAt", null] }, null] }] }, { $eq: ["$_d.state", "held"] }] },
    ],
  };
}

/** The state and due time the transition sets when it applies. */
function targetOf(attempt: AttemptRecord, transition: AttemptTransition): { state: string; nextAttemptAt?: number | undefined } {
  // A verdict the store made `held` (heldTransition, design §18): out of the outbox.
  if (transition.kind === "worker" && transition.state === "held") return { state: "held" };
  if (transition.kind === "worker") {
    return { state: transition.state, nextAttemptAt: transition.state === "pending" ? transition.nextAttemptAt : undefined };
  }
  return { state: isSuccessStatus(attempt.status) ? "delivered" : "failed" };
}

/**
 * Records an attempt of one delivery in one atomic pipeline update: the attempt is appended
 * to the delivery (created as begun when the event has none to that destination), its counter
 * never stays below the attempt's number, and the transition applies only when `appliesExpr`
 * holds, releasing the claim. An attempt number already there changes nothing (a retried
 * call). Each stage decides on scratch fields the one before it set (`_d`: the delivery as it
 * was; `_k`, `_a`: whether the number is known and whether the transition applies; `_n`: the
 * delivery after), so no field of a stage reads another of the same stage, whichever order an
 * engine evaluates them in (mingo goes one by one); the last stage removes them.
 */
export function recordUpdate(ref: DeliveryRef, attempt: AttemptRecord, transition: AttemptTransition): Doc[] {
  const next = targetOf(attempt, transition);
  const knownNumbers = { $ifNull: ["$_d.attempts.n", []] };
  const kept = (field: string) => ({ $ifNull: [`$_d.${field}`, null] });
  const unlessKnown = (value: unknown, field: string) => ({ $cond: ["$_k", `$_d.${field}`, value] });
  return [
    { $set: { _d: currentDelivery(ref.destinationId) } },
    { $set: { _k: { $in: [attempt.n, knownNumbers] }, _a: { $and: [{ $not: [{ $in: [attempt.n, knownNumbers] }] }, appliesExpr(attempt, transition)] } } },
    {
      $set: {
        // The delivery's other fields (a bulk redelivery's tag, ADR 0089) are kept as they are.
        _n: {
          $mergeObjects: [
            "$_d",
            {
              destinationId: { $literal: ref.destinationId },
              state: { $cond: ["$_a", { $literal: next.state }, { $ifNull: ["$_d.state", "pending"] }] },
              target: { $cond: [{ $eq: ["$_d.state", null] }, { $literal: attempt.url }, "$_d.target"] },
              nextAttemptAt: { $cond: ["$_a", { $literal: next.nextAttemptAt ?? null }, kept("nextAttemptAt")] },
              claimOwner: { $cond: ["$_a", null, kept("claimOwner")] },
              claimUntil: { $cond: ["$_a", null, kept("claimUntil")] },
              started: unlessKnown({ $max: ["$_d.started", attempt.n] }, "started"),
              // An attempt that ends held is not counted against maxAttempts (recordedDelivery).
              spared: { $add: [{ $ifNull: ["$_d.spared", 0] }, next.state === "held" ? { $cond: ["$_a", 1, 0] } : 0] },
              attempts: unlessKnown({ $concatArrays: [{ $ifNull: ["$_d.attempts", []] }, [{ $literal: attemptToDoc(attempt) }]] }, "attempts"),
            },
          ],
        },
      },
    },
    { $set: { deliveries: withDelivery(ref.destinationId), bulkEnded: bulkEndedExpr() } },
    SUMMARIZE,
    { $unset: ["_d", "_k", "_a", "_n"] },
  ];
}

/**
 * What the record did to a bulk redelivery's delivery (ADR 0089): `{jobId, outcome}` when this
 * attempt applied and ended it (catalog-core's endedOutcome: it left pending or held for an
 * ended state), else null. The adapter counts it into the job from the updated document.
 */
function bulkEndedExpr(): Doc {
  const open = { $literal: OPEN_STATES };
  const ended = {
    $and: ["$_a", { $ne: [{ $ifNull: ["$_d.bulkJobId", null] }, null] }, { $in: ["$_d.state", open] }, { $not: [{ $in: ["$_n.state", open] }] }],
  };
  return {
    $cond: [ended, { jobId: "$_d.bulkJobId", outcome: { $cond: [{ $in: ["$_n.state", ["delivered", "skipped"]] }, "done", "failed"] } }, null],
  };
}

/** A list's forward_state condition (the aggregate): "none" is an event never forwarded. */
export function forwardStateFilter(forwardState: string): Doc {
  return { forwardState: forwardState === "none" ? null : forwardState };
}

/** A list's destination condition: the events with a delivery to it. */
export function destinationFilter(destinationId: string): Doc {
  return { "deliveries.destinationId": destinationId };
}

/**
 * The outbox's size and oldest due time (an aggregation over the events with a delivery in
 * it): its deliveries that are pending with a due time, claimed or not.
 */
export const OUTBOX_STATS_PIPELINE: Doc[] = [
  { $match: OUTBOX_FILTER },
  {
    $project: {
      due: {
        $map: {
          input: {
            $filter: {
              input: DELIVERIES,
              as: "d",
              cond: { $and: [{ $eq: ["$$d.state", "pending"] }, { $ne: [{ $ifNull: ["$$d.nextAttemptAt", null] }, null] }] },
            },
          },
          as: "d",
          in: "$$d.nextAttemptAt",
        },
      },
    },
  },
  { $group: { _id: null, pending: { $sum: { $size: "$due" } }, oldest: { $min: { $min: "$due" } } } },
];

/**
 * Moves an event stored before deliveries per destination (its one delivery in `forward`) to
 * `deliveries`, under its endpoint's id as destination id (legacyDestinationId), with its
 * aggregate and outbox time; run once at start-up over `LEGACY_FILTER` (connection.ts).
 */
export const LEGACY_FILTER = { forward: { $exists: true }, deliveries: { $exists: false } } as const;
export const LEGACY_MOVE: Doc[] = [
  {
    $set: {
      deliveries: [
        {
          destinationId: "$endpointId",
          state: "$forward.state",
          target: { $ifNull: ["$forward.target", ""] },
          nextAttemptAt: { $ifNull: ["$forward.nextAttemptAt", null] },
          claimOwner: { $ifNull: ["$forward.claimOwner", null] },
          claimUntil: { $ifNull: ["$forward.claimUntil", null] },
          started: { $ifNull: ["$forward.started", 0] },
          attempts: { $ifNull: ["$forward.attempts", []] },
        },
      ],
    },
  },
  SUMMARIZE,
  { $unset: ["forward"] },
];

/**
 * A proxied capture's answer (a pipeline update). The diagnostic is stored as JSON text: its
 * one `"responseSource":"proxy"` becomes `forward_failed`; a sender's bytes never appear there
 * unescaped, so nothing else can match.
 */
export function proxyAnswerUpdate(responseCode: number, forwardFailed: boolean): Doc[] {
  const set: Doc = { responseCode: { $literal: responseCode } };
  if (forwardFailed) {
    set.diagnosticJson = {
      $replaceOne: { input: "$diagnosticJson", find: '"responseSource":"proxy"', replacement: '"responseSource":"forward_failed"' },
    };
  }
  return [{ $set: set }];
}
