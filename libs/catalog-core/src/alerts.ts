import { AppError } from "@whc/errors";
import type { AlertAttemptResult, AlertChannelRecord, AlertDeliveryNote, AlertRecord, RaisedAlert } from "./types.js";

/**
 * The alert outbox's rules (design §18; ADR 0085), as the reference every store follows (the
 * SQLite store applies these functions as they are; the MongoDB documents are checked against
 * them), like delivery.ts for relay deliveries.
 */

/** The refusal of a channel past the account's limit: 429 quota_exceeded, `details.quota` alert_channels. */
export function alertChannelQuotaExceeded(limit: number): AppError {
  return new AppError("quota_exceeded", "alert channel limit of the account reached", { meta: { quota: "alert_channels", limit } });
}

/** A second channel of one name in an account: 409 conflict on `name`. */
export function alertChannelNameTaken(): AppError {
  return new AppError("conflict", "an alert channel with this name exists", { field: "name" });
}

/** Whether the channel is told about this occurrence: its account, its type named, its endpoint seen (or the channel asked for by name). */
export function channelWants(channel: AlertChannelRecord, raised: RaisedAlert): boolean {
  if (channel.accountId !== raised.accountId) return false;
  if (raised.channelId !== undefined) return channel.id === raised.channelId;
  if (!channel.events.includes(raised.type)) return false;
  if (channel.endpointIds.length === 0) return true;
  return raised.endpointId !== undefined && channel.endpointIds.includes(raised.endpointId);
}

/** Alerts of one key are coalesced: one channel, one type, one endpoint. Tests never are. */
export function coalesces(raised: RaisedAlert): boolean {
  return raised.channelId === undefined && raised.type !== "test";
}

/** Not tried yet: a repeat may still be counted into it. */
export function isOpenForRepeats(a: AlertRecord): boolean {
  return a.state === "pending" && a.started === 0;
}

/**
 * What an occurrence does to a channel's alerts: counted into `latest` (the channel's newest
 * alert of the same type and endpoint) while that one has not been tried; else a new alert,
 * due when latest's window ends (at once when there is none, or it ended). So a channel gets at
 * most one alert of a type for an endpoint per window, and each carries how many occurrences
 * it stands for.
 */
export function raisedInto(
  latest: AlertRecord | undefined,
  raised: RaisedAlert,
  channel: AlertChannelRecord,
  at: { now: number; windowMs: number; id: string; endpointSlug: string },
): { kind: "merge"; alert: AlertRecord } | { kind: "insert"; alert: AlertRecord } {
  const dataJson = JSON.stringify(raised.data);
  if (latest && coalesces(raised) && isOpenForRepeats(latest)) {
    return { kind: "merge", alert: { ...latest, count: latest.count + 1, lastAt: at.now, dataJson, endpointSlug: at.endpointSlug || latest.endpointSlug } };
  }
  const dueAt = latest && coalesces(raised) ? Math.max(at.now, latest.dueAt + at.windowMs) : at.now;
  return {
    kind: "insert",
    alert: {
      id: at.id,
      accountId: raised.accountId,
      channelId: channel.id,
      type: raised.type,
      endpointId: raised.endpointId ?? "",
      endpointSlug: at.endpointSlug,
      dataJson,
      count: 1,
      firstAt: at.now,
      lastAt: at.now,
      dueAt,
      state: "pending",
      nextAttemptAt: dueAt,
      claimOwner: undefined,
      claimUntil: undefined,
      started: 0,
      lastAttemptAt: undefined,
      lastStatus: 0,
      lastError: "",
    },
  };
}

/** Pending, due, and not held by an unexpired claim. */
export function isClaimableAlert(a: AlertRecord, now: number): boolean {
  return a.state === "pending" && a.nextAttemptAt !== undefined && a.nextAttemptAt <= now && (a.claimUntil === undefined || a.claimUntil <= now);
}

/** A claim takes the next attempt number and hides the alert until now + claimMs. */
export function claimedAlert(a: AlertRecord, owner: string, now: number, claimMs: number): AlertRecord {
  return { ...a, started: a.started + 1, claimOwner: owner, claimUntil: now + claimMs };
}

/** The worker's claim (owner, attempt n) still holds: nobody took a later number since. */
export function alertClaimHolds(a: AlertRecord, owner: string, n: number): boolean {
  return a.state === "pending" && a.claimOwner === owner && a.started === n;
}

/** The alert after attempt n was recorded; undefined when the claim no longer holds (nothing changes). */
export function recordedAlert(a: AlertRecord, owner: string, n: number, result: AlertAttemptResult): AlertRecord | undefined {
  if (!alertClaimHolds(a, owner, n)) return undefined;
  return {
    ...a,
    state: result.state,
    nextAttemptAt: result.state === "pending" ? result.nextAttemptAt : undefined,
    claimOwner: undefined,
    claimUntil: undefined,
    lastAttemptAt: result.at,
    lastStatus: result.status,
    lastError: result.error,
  };
}

/** The channel's `lastDelivery` after an attempt of this alert. */
export function deliveryNoteOf(a: AlertRecord): AlertDeliveryNote {
  return {
    alertId: a.id,
    type: a.type,
    at: a.lastAttemptAt ?? a.lastAt,
    state: a.state,
    attempts: a.started,
    status: a.lastStatus,
    error: a.lastError,
  };
}
