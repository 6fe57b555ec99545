import { appendCounterUpdate, NEWEST_FIRST, type Doc } from "./documents.js";

/**
 * The endpoint document's field holding the id of the last stamp it gave out (ADR 0008).
 * Stamp ids sort like their (receivedAt, id) pairs, so the id alone orders stamps.
 */
export const LAST_STAMP = "lastStampId";

/** An endpoint and the last stamp it gave out, as an append reads them. */
export const STAMPING_PROJECTION = { _id: 1, [LAST_STAMP]: 1 } as const;

/** The newest event of an endpoint that has not stamped since stamps moved to endpoints. */
export function newestEventQuery(endpointId: string): { filter: Doc; sort: typeof NEWEST_FIRST } {
  return { filter: { endpointId }, sort: NEWEST_FIRST };
}

/**
 * After appending `count` events whose newest is `lastAt`, stamped up to `lastStampId`: the
 * counters, and the last stamp moved forward (never back, whatever order updates land in).
 */
export function stampedAppendUpdate(count: number, lastAt: number, lastStampId: string): Doc {
  const update = appendCounterUpdate(count, lastAt);
  return { ...update, $max: { ...(update.$max as Doc), [LAST_STAMP]: lastStampId } };
}
