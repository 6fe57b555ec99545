import { nextStamp, sequenceStatus, type AppendResult, type CatalogStore, type Clock, type NewEvent, type Stamp } from "@whc/catalog-core";
import type { ClientSession, Collection } from "mongodb";
import type { CatalogCollections, InTransaction } from "./connection.js";
import { sequenceStart, sequenceTakeUpdate } from "./documents.js";
import { LAST_STAMP, STAMPING_PROJECTION, newestEventQuery, stampedAppendUpdate } from "./stamp-documents.js";
import { eventToDoc, type AnyDoc } from "./records.js";
import { dedupeKeyFilter, dedupeOutcomeOf, keptDedupeKeyDoc } from "./dedupe-documents.js";

const answersFromSequence = (e: NewEvent) => (e.sequenceStatuses?.length ?? 0) > 0;

/**
 * Takes, per endpoint, as many response-sequence positions as the batch has events answered
 * from it (one findOneAndUpdate with $inc, in the append's session), and returns each such
 * event's position by its index in the batch. An endpoint found gone here leaves `live`.
 */
async function takeSequencePositions(
  endpoints: Collection<AnyDoc>,
  newEvents: NewEvent[],
  live: Set<string>,
  session: ClientSession | undefined,
): Promise<Map<number, number>> {
  const wanted = new Map<string, number[]>();
  newEvents.forEach((e, i) => {
    if (!live.has(e.endpointId) || !answersFromSequence(e)) return;
    const indexes = wanted.get(e.endpointId);
    if (indexes) indexes.push(i);
    else wanted.set(e.endpointId, [i]);
  });
  const positions = new Map<number, number>();
  for (const [endpointId, indexes] of wanted) {
    const before = await endpoints.findOneAndUpdate({ _id: endpointId }, sequenceTakeUpdate(indexes.length), {
      session,
      returnDocument: "before",
      projection: { sequenceCounter: 1 },
    });
    if (!before) {
      live.delete(endpointId);
      continue;
    }
    const start = sequenceStart(before);
    indexes.forEach((i, k) => positions.set(i, start + k));
  }
  return positions;
}

/**
 * Deduplication (design §17, ADR 0083) in the append's session: each keyed event's key read
 * (a key kept by an earlier event of the batch included: the session reads its own writes) and,
 * unless the event repeats it within its window, kept for it. Answers each duplicate's first
 * event by its index in the batch. Two appends to one endpoint in different processes both
 * write the endpoint's document: one of them is run again, and then reads the other's keys.
 */
async function deduplicate(
  dedupeKeys: Collection<AnyDoc>,
  newEvents: NewEvent[],
  stamps: (Stamp | undefined)[],
  session: ClientSession | undefined,
): Promise<Map<number, string>> {
  const duplicates = new Map<number, string>();
  for (const [i, e] of newEvents.entries()) {
    const s = stamps[i];
    if (!e.dedupe || !s) continue;
    const filter = dedupeKeyFilter(e.endpointId, e.dedupe.keyHash);
    const outcome = dedupeOutcomeOf(await dedupeKeys.findOne(filter, { session }), s, e.dedupe.windowMs);
    if (outcome.duplicateOf !== undefined) duplicates.set(i, outcome.duplicateOf);
    else await dedupeKeys.replaceOne(filter, keptDedupeKeyDoc(e.endpointId, e.dedupe.keyHash, outcome.keep), { upsert: true, session });
  }
  return duplicates;
}

function resultOf(e: NewEvent, s: Stamp, position: number | undefined): AppendResult {
  if (position === undefined) return { id: s.id, receivedAt: s.receivedAt, responseCode: e.responseCode };
  return { id: s.id, receivedAt: s.receivedAt, responseCode: sequenceStatus(e.sequenceStatuses ?? [], position), sequenceIndex: position };
}

/**
 * The last stamp of each endpoint of the batch that exists, read in the append's session: the
 * endpoint's own field, or, for one that has not stamped since stamps moved to endpoints, its
 * newest event.
 */
async function lastStamps(
  { endpoints, events }: Pick<CatalogCollections, "endpoints" | "events">,
  ids: string[],
  session: ClientSession | undefined,
): Promise<Map<string, string | undefined>> {
  const found = await endpoints.find({ _id: { $in: ids } }, { projection: STAMPING_PROJECTION, session }).toArray();
  const last = new Map<string, string | undefined>();
  for (const d of found) {
    let id = d[LAST_STAMP] as string | undefined;
    if (id === undefined) {
      const { filter, sort } = newestEventQuery(d._id as string);
      id = (await events.find(filter, { projection: { _id: 1 }, session }).sort(sort).limit(1).next())?._id as string | undefined;
    }
    last.set(d._id as string, id);
  }
  return last;
}

/**
 * Appends, stamped per endpoint inside the append's transaction (ADR 0008): each endpoint's
 * last stamp is read in the transaction and moved by its first write, before the events are
 * inserted. Two catalogs appending to one endpoint at once both write its document; MongoDB
 * lets one transaction commit and fails the other with a write conflict, which withTransaction
 * runs again from the start, reading the stamp the first one moved. So per endpoint, commit
 * order is (receivedAt, id) order, whatever number of catalogs append. Within one process
 * appends still take turns, which keeps conflicts to those between processes. A standalone
 * server has no transactions: there only one catalog process may append (docs/operations.md).
 * An event whose endpoint is gone is not stored and has no stamp. Events answered from a
 * response sequence take the endpoint's counter in the append's transaction: an aborted append
 * gives no position away, and each position is given once (the $inc is atomic even without one).
 */
export function createEventAppend(
  { endpoints, events, dedupeKeys }: Pick<CatalogCollections, "endpoints" | "events" | "dedupeKeys">,
  inTransaction: InTransaction,
): Pick<CatalogStore, "appendEvents"> {
  let appendChain: Promise<unknown> = Promise.resolve();

  async function append(newEvents: NewEvent[], clock: Clock): Promise<(AppendResult | undefined)[]> {
    const ids = [...new Set(newEvents.map((e) => e.endpointId))];
    // Set afresh by every attempt: withTransaction may run the work again.
    let results: (AppendResult | undefined)[] = [];
    await inTransaction(async (session) => {
      const last = await lastStamps({ endpoints, events }, ids, session);
      const live = new Set(last.keys());
      const positions = await takeSequencePositions(endpoints, newEvents, live, session);
      const stamps = newEvents.map((e) => {
        const now = clock();
        if (!live.has(e.endpointId)) return undefined;
        const s = nextStamp(last.get(e.endpointId), now);
        last.set(e.endpointId, s.id);
        return s;
      });
      const duplicates = await deduplicate(dedupeKeys, newEvents, stamps, session);
      results = newEvents.map((e, i) => {
        const s = stamps[i];
        if (!s) return undefined;
        const result = resultOf(e, s, positions.get(i));
        const duplicateOf = duplicates.get(i);
        return duplicateOf === undefined ? result : { ...result, duplicateOf };
      });
      const docs: AnyDoc[] = [];
      const touched = new Map<string, { count: number; last: number; stampId: string }>();
      newEvents.forEach((e, i) => {
        const result = results[i];
        if (!result) return;
        docs.push(eventToDoc(e, result, result.responseCode, result.duplicateOf));
        const t = touched.get(e.endpointId) ?? { count: 0, last: 0, stampId: result.id };
        t.count += 1;
        t.last = Math.max(t.last, result.receivedAt);
        t.stampId = result.id;
        touched.set(e.endpointId, t);
      });
      // The endpoint first: a concurrent append's conflict shows before any insert is made.
      for (const [endpointId, t] of touched) {
        await endpoints.updateOne({ _id: endpointId }, stampedAppendUpdate(t.count, t.last, t.stampId), { session });
      }
      if (docs.length) await events.insertMany(docs, { ordered: true, session });
    });
    return results;
  }

  return {
    appendEvents(newEvents, clock) {
      const run = appendChain.then(() => append(newEvents, clock));
      appendChain = run.catch(() => undefined);
      return run;
    },
  };
}
