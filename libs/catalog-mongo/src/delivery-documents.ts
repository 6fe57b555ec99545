import { isSuccessStatus, type AttemptRecord } from "@whc/catalog-core";
import type { Doc } from "./documents.js";
import { attemptToDoc } from "./records.js";
import type { AttemptTransition, EventRef } from "@whc/ports";

/**
 * The relay outbox's filter and update documents: the events whose `forward` is pending with
 * a due time. Each is checked with mingo (delivery-documents.test.ts) against catalog-core's
 * reference functions (isClaimable, claimedDelivery, begunDelivery, recordedDelivery). The
 * subdocument's unset fields are null (deliveryToDoc says why); `{field: null}` also matches
 * an absent one.
 */

/** The outbox's index: partial on pending deliveries, in due order (then commit order). */
export const OUTBOX_INDEX = {
  key: { "forward.nextAttemptAt": 1, _id: 1 },
  name: "outbox",
  partialFilterExpression: { "forward.state": "pending" },
} as const;

/** Oldest due first. */
export const CLAIM_ORDER = { "forward.nextAttemptAt": 1, _id: 1 } as const;

/** Every delivery in the outbox (the index's condition, and a due time). */
export const OUTBOX_FILTER = { "forward.state": "pending", "forward.nextAttemptAt": { $type: "number" } } as const;

/** In the outbox and due after `after` (sorted by CLAIM_ORDER, the first is the next due). */
export function nextDueFilter(after: number): Doc {
  return { ...OUTBOX_FILTER, "forward.nextAttemptAt": { ...OUTBOX_FILTER["forward.nextAttemptAt"], $gt: after } };
}

/** Due at `now` and not held by an unexpired claim. */
export function claimFilter(now: number): Doc {
  return {
    "forward.state": "pending",
    "forward.nextAttemptAt": { $lte: now },
    $or: [{ "forward.claimUntil": null }, { "forward.claimUntil": { $lte: now } }],
  };
}

/** Takes the next attempt number and hides the delivery until now + claimMs. */
export function claimUpdate(owner: string, now: number, claimMs: number): Doc {
  return { $inc: { "forward.started": 1 }, $set: { "forward.claimOwner": owner, "forward.claimUntil": now + claimMs } };
}

export function eventRefFilter(ref: EventRef): Doc {
  return { _id: ref.eventId, endpointId: ref.endpointId, accountId: ref.accountId };
}

/** The next attempt number outside the outbox; a first attempt creates the delivery. */
export function beginUpdate(target: string): Doc[] {
  return [
    {
      $set: {
        "forward.state": { $ifNull: ["$forward.state", "pending"] },
        "forward.target": { $ifNull: ["$forward.target", { $literal: target }] },
        "forward.nextAttemptAt": { $ifNull: ["$forward.nextAttemptAt", null] },
        "forward.claimOwner": { $ifNull: ["$forward.claimOwner", null] },
        "forward.claimUntil": { $ifNull: ["$forward.claimUntil", null] },
        "forward.started": { $add: [{ $ifNull: ["$forward.started", 0] }, 1] },
        "forward.attempts": { $ifNull: ["$forward.attempts", []] },
      },
    },
  ];
}

/** Whether the transition applies, as an expression over the event as it was. */
function appliesExpr(attempt: AttemptRecord, transition: AttemptTransition): unknown {
  if (transition.kind === "worker") {
    // The claim (owner, n) still holds: nobody took a later attempt number since.
    return {
      $and: [
        { $eq: ["$forward.state", "pending"] },
        { $eq: ["$forward.claimOwner", { $literal: transition.owner }] },
        { $eq: ["$forward.started", attempt.n] },
      ],
    };
  }
  if (isSuccessStatus(attempt.status)) return true;
  // Not a delivery waiting in the outbox: it becomes failed.
  return {
    $not: [{ $and: [{ $eq: ["$forward.state", "pending"] }, { $ne: [{ $ifNull: ["$forward.nextAttemptAt", null] }, null] }] }],
  };
}

/** The state and due time the transition sets when it applies. */
function targetOf(attempt: AttemptRecord, transition: AttemptTransition): { state: string; nextAttemptAt?: number | undefined } {
  if (transition.kind === "worker") {
    return { state: transition.state, nextAttemptAt: transition.state === "pending" ? transition.nextAttemptAt : undefined };
  }
  return { state: isSuccessStatus(attempt.status) ? "delivered" : "failed" };
}

/**
 * Records an attempt in one atomic pipeline update: the attempt is appended, the counter
 * never stays below its number, and the transition applies only when `appliesExpr` holds,
 * releasing the claim. An attempt number already there changes nothing (a retried call).
 * The first stage decides on the event as it came in and notes it in two scratch fields that
 * the last stage removes: then every field of the second reads only itself and those notes,
 * whichever order an engine evaluates a stage's fields in (mingo goes one by one).
 */
export function recordUpdate(attempt: AttemptRecord, transition: AttemptTransition): Doc[] {
  const next = targetOf(attempt, transition);
  const known = "$_attemptKnown";
  const applies = "$_transitionApplies";
  const kept = (field: string) => ({ $ifNull: [`$forward.${field}`, null] });
  const unlessKnown = (value: unknown, field: string) => ({ $cond: [known, `$forward.${field}`, value] });
  return [
    {
      $set: {
        _attemptKnown: { $in: [attempt.n, { $ifNull: ["$forward.attempts.n", []] }] },
        _transitionApplies: {
          $and: [{ $not: [{ $in: [attempt.n, { $ifNull: ["$forward.attempts.n", []] }] }] }, appliesExpr(attempt, transition)],
        },
      },
    },
    {
      $set: {
        "forward.state": { $cond: [applies, { $literal: next.state }, { $ifNull: ["$forward.state", "pending"] }] },
        "forward.target": { $ifNull: ["$forward.target", { $literal: attempt.url }] },
        "forward.nextAttemptAt": { $cond: [applies, { $literal: next.nextAttemptAt ?? null }, kept("nextAttemptAt")] },
        "forward.claimOwner": { $cond: [applies, null, kept("claimOwner")] },
        "forward.claimUntil": { $cond: [applies, null, kept("claimUntil")] },
        "forward.started": unlessKnown({ $max: [{ $ifNull: ["$forward.started", 0] }, attempt.n] }, "started"),
        "forward.attempts": unlessKnown({ $concatArrays: [{ $ifNull: ["$forward.attempts", []] }, [{ $literal: attemptToDoc(attempt) }]] }, "attempts"),
      },
    },
    { $unset: ["_attemptKnown", "_transitionApplies"] },
  ];
}

/** A list's forward_state condition: "none" is an event never forwarded. */
export function forwardStateFilter(forwardState: string): Doc {
  return forwardState === "none" ? { forward: { $exists: false } } : { "forward.state": forwardState };
}

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
