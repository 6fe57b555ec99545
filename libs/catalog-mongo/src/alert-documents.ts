import type { AlertAttemptResult, AlertDeliveryNote, AlertRecord } from "@whc/catalog-core";
import type { Doc } from "./documents.js";

/**
 * The alert outbox's filter and update documents (ADR 0085), each checked with mingo
 * (alert-documents.test.ts) against catalog-core's reference functions (isClaimableAlert,
 * claimedAlert, alertClaimHolds, recordedAlert, isOpenForRepeats, raisedInto).
 */

/** The outbox's index: partial on pending alerts, in due order. */
export const ALERT_OUTBOX_INDEX = {
  key: { nextAttemptAt: 1, _id: 1 },
  name: "outbox",
  partialFilterExpression: { state: "pending" },
} as const;

/** Oldest due first. */
export const ALERT_CLAIM_ORDER = { nextAttemptAt: 1, _id: 1 } as const;

/** A key's newest alert first: the window the next occurrence falls in. */
export const LATEST_ORDER = { dueAt: -1, _id: -1 } as const;

/** Every alert of one coalescing key: one channel, one type, one endpoint ("" for none). */
export function alertKeyFilter(channelId: string, type: string, endpointId: string): Doc {
  return { channelId, type, endpointId };
}

/** The alert still takes repeats: pending and never tried (isOpenForRepeats). */
export function openForRepeatsFilter(alertId: string): Doc {
  return { _id: alertId, state: "pending", started: 0 };
}

/**
 * A repeat counted into an open alert: `$inc` the count, so that two repeats counted at once
 * on a server without transactions both count; the last occurrence's data and time replace.
 */
export function repeatUpdate(merged: AlertRecord): Doc {
  return { $inc: { count: 1 }, $set: { lastAt: merged.lastAt, dataJson: merged.dataJson, endpointSlug: merged.endpointSlug } };
}

/** Pending, due at `now`, not held by an unexpired claim (isClaimableAlert). */
export function alertClaimFilter(now: number): Doc {
  return {
    state: "pending",
    nextAttemptAt: { $lte: now },
    $or: [{ claimUntil: null }, { claimUntil: { $lte: now } }],
  };
}

/** Takes the next attempt number and hides the alert until now + claimMs (claimedAlert). */
export function alertClaimUpdate(owner: string, now: number, claimMs: number): Doc {
  return { $inc: { started: 1 }, $set: { claimOwner: owner, claimUntil: now + claimMs } };
}

/** Pending alerts due after `after`, for the next look (sorted by ALERT_CLAIM_ORDER). */
export function nextAlertDueFilter(after: number): Doc {
  return { state: "pending", nextAttemptAt: { $gt: after } };
}

/** The claim (owner, attempt n) still holds (alertClaimHolds). */
export function alertHeldFilter(alertId: string, owner: string, n: number): Doc {
  return { _id: alertId, state: "pending", claimOwner: owner, started: n };
}

/** What an attempt's record sets (recordedAlert), the claim released. */
export function alertRecordUpdate(result: AlertAttemptResult): Doc {
  return {
    $set: {
      state: result.state,
      nextAttemptAt: result.state === "pending" ? (result.nextAttemptAt ?? null) : null,
      claimOwner: null,
      claimUntil: null,
      lastAttemptAt: result.at,
      lastStatus: result.status,
      lastError: result.error,
    },
  };
}

/** The channel's lastDelivery after an attempt. */
export function lastDeliveryUpdate(note: AlertDeliveryNote): Doc {
  return { $set: { lastDelivery: note } };
}

/** Finished alerts whose window started before `before`. */
export function finishedAlertsFilter(before: number): Doc {
  return { state: { $ne: "pending" }, dueAt: { $lt: before } };
}

/** Every create of an account's channel bumps this on the account's document first: two creates conflict (as endpointQuotaGuard). */
export function alertChannelGuard(accountId: string): { filter: Doc; update: Doc } {
  return { filter: { _id: accountId }, update: { $inc: { alertChannelCreates: 1 } } };
}
