import { FORWARDING_MODES } from "@whc/api-model";
import { replacedFields, type Cursor, type EndpointPatch, type EventQuery, type ForwardPrecondition } from "@whc/catalog-core";
import { destinationFilter, forwardStateFilter } from "./delivery-documents.js";
import { bytes } from "./records.js";

/**
 * The filter, sort and update documents the MongoDB adapter sends, built by pure functions so
 * that their semantics are tested here with mingo over the same fixtures the adapter stores.
 * Times are numbers (ms) and ids strings: every sort key is a single-typed scalar.
 */
export type Doc = Record<string, unknown>;

export const NEWEST_FIRST = { receivedAt: -1, _id: -1 } as const;
export const OLDEST_FIRST = { receivedAt: 1, _id: 1 } as const;

/** Strictly before (`$lt`) or after (`$gt`) the (time, id) pair in (`field`, _id) order: a keyset cursor. */
export function beyondPair(field: string, op: "$lt" | "$gt", at: number, id: string): Doc {
  return { $or: [{ [field]: { [op]: at } }, { [field]: at, _id: { [op]: id } }] };
}

/** Strictly older than the (receivedAt, id) pair. */
export function olderThan(c: Cursor): Doc {
  return beyondPair("receivedAt", "$lt", c.receivedAt, c.id);
}

/** Strictly newer than the (receivedAt, id) pair. */
export function newerThan(c: Cursor): Doc {
  return beyondPair("receivedAt", "$gt", c.receivedAt, c.id);
}

/** The filters of operation 5 other than cursors and search: endpoint, time window, fields. */
export function baseFilter(q: EventQuery): Doc {
  const filter: Doc = { endpointId: q.endpointId, accountId: q.accountId };
  const window: Doc = {};
  if (q.fromMs !== undefined) window.$gte = q.fromMs;
  if (q.toMs !== undefined) window.$lt = q.toMs;
  if (Object.keys(window).length) filter.receivedAt = window;
  if (q.eventType !== undefined) filter.canonicalEventType = q.eventType;
  if (q.provider !== undefined) filter.provider = q.provider;
  if (q.responseCode !== undefined) filter.responseCode = q.responseCode;
  if (q.verification !== undefined) filter.verification = q.verification;
  if (q.forwardState !== undefined) Object.assign(filter, forwardStateFilter(q.forwardState));
  if (q.schemaDrift !== undefined) filter.schemaDrift = { $exists: q.schemaDrift };
  if (q.duplicate !== undefined) filter.duplicateOf = { $exists: q.duplicate };
  if (q.destinationId !== undefined) Object.assign(filter, destinationFilter(q.destinationId));
  return filter;
}

/**
 * A page's filter. `tokens` (already in stored form) adds the search: every token present,
 * bodies stored. `extra` adds more cursor conditions (the hasOlder probe).
 */
export function pageFilter(q: EventQuery, tokens?: readonly unknown[], ...extra: Doc[]): Doc {
  const and: Doc[] = [];
  if (q.before) and.push(olderThan(q.before));
  if (q.after) and.push(newerThan(q.after));
  and.push(...extra);
  const filter: Doc = { ...baseFilter(q) };
  if (tokens) {
    filter.bodyStored = true;
    filter.tokens = { $all: [...tokens] };
  }
  return and.length ? { ...filter, $and: and } : filter;
}

/** Endpoints by id ascending: what pages of an account's endpoints are sorted by. */
export const BY_ID = { _id: 1 } as const;

/**
 * An account's endpoints with ids greater than `after` (any id, a deleted endpoint's too);
 * without it, all of them. With BY_ID and a limit, it walks the index { accountId, _id }.
 */
export function endpointPageFilter(accountId: string, after?: string): Doc {
  return after === undefined ? { accountId } : { accountId, _id: { $gt: after } };
}

/**
 * The write a create under the endpoint quota makes first, in its transaction (ADR 0036): it
 * moves the account's document, so two creates of one account that overlap conflict and
 * MongoDB runs the later one again, and its count then sees the other's endpoint.
 */
export function endpointQuotaGuard(accountId: string): { filter: Doc; update: Doc } {
  return { filter: { _id: accountId }, update: { $inc: { endpointCreates: 1 } } };
}

/** Metadata-only events a search leaves out (counted, not paged). */
export function excludedFilter(q: EventQuery): Doc {
  return { ...baseFilter(q), bodyStored: false };
}

/** Summary fields only: never headers, bodies, sealed requests, tokens or deliveries in a list (their aggregate state stays). */
export const SUMMARY_PROJECTION = {
  headers: 0,
  body: 0,
  request: 0,
  tokens: 0,
  diagnosticJson: 0,
  forwardedResponseJson: 0,
  redactionsJson: 0,
  schemaDrift: 0,
  deliveries: 0,
  lastClaim: 0,
  bulkEnded: 0,
  outboxAt: 0,
} as const;

export function counterId(accountId: string, day: string): string {
  return `${accountId}:${day}`;
}

/** Matches the day's counter only while it is below the limit; upserts it at 1 otherwise. */
export function chargeFilter(accountId: string, day: string, limit: number): Doc {
  return { _id: counterId(accountId, day), used: { $lt: limit } };
}

export function chargeUpdate(accountId: string, day: string): Doc {
  return { $inc: { used: 1 }, $setOnInsert: { accountId, day } };
}

/** After appending `count` events whose newest is `last`. */
export function appendCounterUpdate(count: number, last: number): Doc {
  return { $inc: { eventCount: count }, $max: { lastEventAt: last } };
}

/** Removes `n` events from the count (never below zero); a purge also records itself. */
export function removedCounterUpdate(n: number, purgedAt?: number): Doc[] {
  return [
    {
      $set: {
        eventCount: { $max: [0, { $subtract: ["$eventCount", n] }] },
        ...(purgedAt === undefined
          ? {}
          : { purgedEventCount: { $add: ["$purgedEventCount", n] }, lastPurgedAt: purgedAt }),
      },
    },
  ];
}

/** Sets readAt only on the first read. */
export function markReadFilter(accountId: string, endpointId: string, eventId: string): Doc {
  return { _id: eventId, endpointId, accountId, readAt: { $exists: false } };
}

/** One account's endpoint: another account's id matches nothing. */
export function endpointOfAccount(accountId: string, endpointId: string): Doc {
  return { _id: endpointId, accountId };
}

/**
 * What the stored endpoint must match for a patch to apply, beyond being the account's
 * (catalog-core's forwardPrecondition): a relay or proxy endpoint keeps forward settings,
 * checked in the update's own filter so that no concurrent update slips between a read and
 * the write. Undefined: the patch is refused whatever is stored.
 */
export function forwardPreconditionFilter(pre: ForwardPrecondition): Doc | undefined {
  switch (pre) {
    case "none":
      return {};
    case "refuse":
      return undefined;
    case "stored_forward":
      // Any non-empty string; an absent or empty forwardJson is no settings.
      return { forwardJson: { $gt: "" } };
    case "stored_mode_not_forwarding":
      return { operatingMode: { $nin: [...FORWARDING_MODES] } };
  }
}

/**
 * A patch as one pipeline update, so that a rotation reads the current secret and writes it as
 * the previous one atomically, without a transaction. Every given value is a `$literal`: in a
 * pipeline a string starting with `$` would otherwise be read as a field path. The semantics
 * are applyEndpointPatch's (catalog-core); documents.test.ts checks them against it.
 */
export function endpointPatchUpdate(patch: EndpointPatch, now: number): Doc[] {
  const set: Doc = {};
  for (const [field, value] of Object.entries(replacedFields(patch))) set[field] = { $literal: value };
  if (patch.sealedSecret !== undefined) {
    // A $set stage evaluates every expression on the document as it came in.
    set.sealedPreviousSecret = patch.clearSecret ? "$$REMOVE" : { $ifNull: ["$sealedSecret", "$$REMOVE"] };
    set.sealedSecret = { $literal: bytes(patch.sealedSecret) };
    set.secretRotatedAt = { $literal: now };
  }
  if (patch.resetSequence) set.sequenceCounter = { $literal: 0 };
  set.updatedAt = { $literal: now };
  const unset: string[] = [];
  if (patch.clearSecret && patch.sealedSecret === undefined) unset.push("sealedSecret", "sealedPreviousSecret", "secretRotatedAt");
  // Removing the forward settings removes their secret, whatever else the patch says.
  if (patch.forwardJson === "" || (patch.clearTargetSecret && patch.sealedTargetSecret === undefined)) unset.push("sealedTargetSecret");
  else if (patch.sealedTargetSecret !== undefined) set.sealedTargetSecret = { $literal: bytes(patch.sealedTargetSecret) };
  // The destinations' secrets go with them, and are replaced (empty: removed) as a whole.
  if (patch.forwardJson === "" || (patch.sealedDestinationSecrets !== undefined && patch.sealedDestinationSecrets.length === 0)) unset.push("sealedDestinationSecrets");
  else if (patch.sealedDestinationSecrets !== undefined) set.sealedDestinationSecrets = { $literal: bytes(patch.sealedDestinationSecrets) };
  // The inbound protection and its sealed secrets are replaced (or removed) together.
  if (patch.inboundJson === "" || (patch.inboundJson !== undefined && patch.sealedInbound === undefined)) unset.push("sealedInbound");
  else if (patch.inboundJson !== undefined && patch.sealedInbound !== undefined) set.sealedInbound = { $literal: bytes(patch.sealedInbound) };
  const stages: Doc[] = [{ $set: set }];
  if (unset.length) stages.push({ $unset: unset });
  return stages;
}

/** Adds refused requests to an endpoint's rejectedCount (a document from before it had one starts at 0). */
export function rejectionsUpdate(count: number): Doc {
  return { $inc: { rejectedCount: count } };
}

/** Takes `count` positions of an endpoint's response sequence (read the document from before). */
export function sequenceTakeUpdate(count: number): Doc {
  return { $inc: { sequenceCounter: count } };
}

/** The first position a sequenceTakeUpdate took, from the endpoint as it was before it. */
export function sequenceStart(before: Doc): number {
  return (before.sequenceCounter as number | undefined) ?? 0;
}
