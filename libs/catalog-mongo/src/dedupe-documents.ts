import { dedupeDecision, dedupeKeyId, type DedupeKeyRecord, type DedupeOutcome, type Stamp } from "@whc/catalog-core";
import type { AnyDoc } from "./records.js";
import type { Doc } from "./documents.js";

/**
 * Deduplication keys (design §17, ADR 0083) in `dedupe_keys`: one document per endpoint and
 * keyed hash, `_id` built from both (dedupeKeyId), holding the first event and the end of the
 * key's window; never the key in clear. Read and written in the append's transaction, whose
 * write to the endpoint's document makes concurrent appends to one endpoint take turns.
 */

/** The document of an endpoint's key. */
export function dedupeKeyFilter(endpointId: string, keyHash: Uint8Array): { _id: string } {
  return { _id: dedupeKeyId(endpointId, keyHash) };
}

/** What the append decides from the key's document as read (null: none), by the reference. */
export function dedupeOutcomeOf(doc: AnyDoc | null, stamp: Stamp, windowMs: number): DedupeOutcome {
  const stored = doc ? { firstEventId: doc.firstEventId as string, expiresAt: doc.expiresAt as number } : undefined;
  return dedupeDecision(stored, stamp, windowMs);
}

/** The key's document once this event keeps it: it replaces an expired one (upsert). */
export function keptDedupeKeyDoc(endpointId: string, keyHash: Uint8Array, keep: Pick<DedupeKeyRecord, "firstEventId" | "expiresAt">): AnyDoc {
  return { ...dedupeKeyFilter(endpointId, keyHash), endpointId, firstEventId: keep.firstEventId, expiresAt: keep.expiresAt };
}

/** Keys whose window ended by `now`: the purge's. */
export function expiredDedupeKeysFilter(now: number): Doc {
  return { expiresAt: { $lte: now } };
}

/** Every key of an endpoint: deleted with it, counted by countDedupeKeys. */
export function endpointDedupeKeysFilter(endpointId: string): Doc {
  return { endpointId };
}
