import type { CatalogStore, NewEvent, Stamp } from "@whc/catalog-core";
import type { CatalogCollections, InTransaction } from "./connection.js";
import { appendCounterUpdate } from "./documents.js";
import { eventToDoc, type AnyDoc } from "./records.js";

/**
 * Appends, one at a time within the store (the catalog is one process): each batch is
 * stamped inside that serialization, so stamps are taken in commit order. An event whose
 * endpoint is gone is not stored and has no stamp.
 */
export function createEventAppend(
  { endpoints, events }: Pick<CatalogCollections, "endpoints" | "events">,
  inTransaction: InTransaction,
): Pick<CatalogStore, "appendEvents"> {
  let appendChain: Promise<unknown> = Promise.resolve();

  async function append(newEvents: NewEvent[], stamp: () => Stamp): Promise<(Stamp | undefined)[]> {
    const stamps: Stamp[] = newEvents.map(() => stamp());
    const ids = [...new Set(newEvents.map((e) => e.endpointId))];
    let live = new Set<string>();
    await inTransaction(async (session) => {
      live = new Set(
        (await endpoints.find({ _id: { $in: ids } }, { projection: { _id: 1 }, session }).toArray()).map((d) => d._id as string),
      );
      const docs: AnyDoc[] = [];
      const touched = new Map<string, { count: number; last: number }>();
      newEvents.forEach((e, i) => {
        if (!live.has(e.endpointId)) return;
        const s = stamps[i] as Stamp;
        docs.push(eventToDoc(e, s));
        const t = touched.get(e.endpointId) ?? { count: 0, last: 0 };
        t.count += 1;
        t.last = Math.max(t.last, s.receivedAt);
        touched.set(e.endpointId, t);
      });
      if (docs.length) await events.insertMany(docs, { ordered: true, session });
      for (const [endpointId, t] of touched) {
        await endpoints.updateOne({ _id: endpointId }, appendCounterUpdate(t.count, t.last), { session });
      }
    });
    return newEvents.map((e, i) => (live.has(e.endpointId) ? stamps[i] : undefined));
  }

  return {
    appendEvents(newEvents, stamp) {
      const run = appendChain.then(() => append(newEvents, stamp));
      appendChain = run.catch(() => undefined);
      return run;
    },
  };
}
