import { sequenceStatus, type AppendResult, type CatalogStore, type NewEvent, type Stamp } from "@whc/catalog-core";
import type { ClientSession, Collection } from "mongodb";
import type { CatalogCollections, InTransaction } from "./connection.js";
import { appendCounterUpdate, sequenceStart, sequenceTakeUpdate } from "./documents.js";
import { eventToDoc, type AnyDoc } from "./records.js";

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

function resultOf(e: NewEvent, s: Stamp, position: number | undefined): AppendResult {
  if (position === undefined) return { id: s.id, receivedAt: s.receivedAt, responseCode: e.responseCode };
  return { id: s.id, receivedAt: s.receivedAt, responseCode: sequenceStatus(e.sequenceStatuses ?? [], position), sequenceIndex: position };
}

/**
 * Appends, one at a time within the store (the catalog is one process): each batch is
 * stamped inside that serialization, so stamps are taken in commit order. An event whose
 * endpoint is gone is not stored and has no stamp. Events answered from a response sequence
 * take the endpoint's counter in the append's transaction: an aborted append gives no
 * position away, and each position is given once (the $inc is atomic even without one).
 */
export function createEventAppend(
  { endpoints, events }: Pick<CatalogCollections, "endpoints" | "events">,
  inTransaction: InTransaction,
): Pick<CatalogStore, "appendEvents"> {
  let appendChain: Promise<unknown> = Promise.resolve();

  async function append(newEvents: NewEvent[], stamp: () => Stamp): Promise<(AppendResult | undefined)[]> {
    const stamps: Stamp[] = newEvents.map(() => stamp());
    const ids = [...new Set(newEvents.map((e) => e.endpointId))];
    // Set afresh by every attempt: withTransaction may run the work again.
    let results: (AppendResult | undefined)[] = [];
    await inTransaction(async (session) => {
      const live = new Set(
        (await endpoints.find({ _id: { $in: ids } }, { projection: { _id: 1 }, session }).toArray()).map((d) => d._id as string),
      );
      const positions = await takeSequencePositions(endpoints, newEvents, live, session);
      results = newEvents.map((e, i) => (live.has(e.endpointId) ? resultOf(e, stamps[i] as Stamp, positions.get(i)) : undefined));
      const docs: AnyDoc[] = [];
      const touched = new Map<string, { count: number; last: number }>();
      newEvents.forEach((e, i) => {
        const result = results[i];
        if (!result) return;
        docs.push(eventToDoc(e, result, result.responseCode));
        const t = touched.get(e.endpointId) ?? { count: 0, last: 0 };
        t.count += 1;
        t.last = Math.max(t.last, result.receivedAt);
        touched.set(e.endpointId, t);
      });
      if (docs.length) await events.insertMany(docs, { ordered: true, session });
      for (const [endpointId, t] of touched) {
        await endpoints.updateOne({ _id: endpointId }, appendCounterUpdate(t.count, t.last), { session });
      }
    });
    return results;
  }

  return {
    appendEvents(newEvents, stamp) {
      const run = appendChain.then(() => append(newEvents, stamp));
      appendChain = run.catch(() => undefined);
      return run;
    },
  };
}
