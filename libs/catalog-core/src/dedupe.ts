import type { DedupeKeyRecord, NewEvent, Stamp } from "./types.js";
import type { DeliveryState } from "@whc/api-model";

/**
 * Deduplication in the append (design §17, ADR 0083): the reference every store applies inside
 * its append transaction, so that concurrent ingest and catalog replicas agree on which capture
 * was first. A key's window is half-open: a capture received before `expiresAt` is a duplicate.
 */

/** The longest keyed hash a capture may carry (ingest sends 32 bytes of HMAC-SHA256). */
export const MAX_DEDUPE_KEY_BYTES = 64;
/** The longest window (the /v1 limit, 30 days). */
export const MAX_DEDUPE_WINDOW_MS = 30 * 86_400_000;

/** What the append does with an event's key: mark it a duplicate, or keep (insert or replace) the key for it. */
export type DedupeOutcome = { duplicateOf: string; keep?: undefined } | { duplicateOf?: undefined; keep: Pick<DedupeKeyRecord, "firstEventId" | "expiresAt"> };

/**
 * The decision for an event stamped `stamp` whose key the endpoint holds as `stored` (undefined:
 * never seen, or purged): a duplicate of the stored first event while its window lasts; else
 * this event is the first, and its key holds until receivedAt + windowMs (replacing an expired one).
 */
export function dedupeDecision(stored: Pick<DedupeKeyRecord, "firstEventId" | "expiresAt"> | undefined, stamp: Stamp, windowMs: number): DedupeOutcome {
  if (stored !== undefined && stamp.receivedAt < stored.expiresAt) return { duplicateOf: stored.firstEventId };
  return { keep: { firstEventId: stamp.id, expiresAt: stamp.receivedAt + windowMs } };
}

/** The aggregate delivery state a new event is stored with: none, pending, or duplicate (its deliveries' state). */
export function appendedForwardState(e: Pick<NewEvent, "forward">, duplicateOf: string | undefined): DeliveryState | undefined {
  if (!e.forward?.deliveries.length) return undefined;
  return duplicateOf === undefined ? "pending" : "duplicate";
}

/** The store's key of an endpoint's deduplication key: what both stores index by. */
export function dedupeKeyId(endpointId: string, keyHash: Uint8Array): string {
  return `${endpointId}:${Buffer.from(keyHash).toString("base64url")}`;
}
