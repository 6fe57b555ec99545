import type { CatalogStore, EventPage } from "@whc/catalog-core";
import type { CatalogCollections } from "./connection.js";
import { NEWEST_FIRST, OLDEST_FIRST, SUMMARY_PROJECTION, excludedFilter, olderThan, pageFilter } from "./documents.js";
import { summaryDocs, tokensOf, type AnyDoc } from "./records.js";

/** Lists and searches of an endpoint's events, newest first, paged by (receivedAt, id) cursors. */
export function createEventSearch({ events }: Pick<CatalogCollections, "events">): Pick<CatalogStore, "listEvents"> {
  return {
    async listEvents(q): Promise<EventPage> {
      const tokens = q.searchTokens ? tokensOf(q.searchTokens) : undefined;
      if (tokens && tokens.length === 0) return { events: [], hasOlder: false, searchExcludedMetadataOnlyCount: 0 };
      let docs: AnyDoc[];
      let hasOlder: boolean;
      if (q.after) {
        docs = (
          await events.find(pageFilter(q, tokens), { projection: SUMMARY_PROJECTION }).sort(OLDEST_FIRST).limit(q.limit).toArray()
        ).reverse();
        const oldest = docs[docs.length - 1];
        const probe = oldest && pageFilter({ ...q, after: undefined, before: undefined }, tokens, olderThan({ receivedAt: oldest.receivedAt, id: oldest._id }));
        hasOlder = probe ? (await events.findOne(probe, { projection: { _id: 1 } })) !== null : false;
      } else {
        docs = await events
          .find(pageFilter(q, tokens), { projection: SUMMARY_PROJECTION })
          .sort(NEWEST_FIRST)
          .limit(q.limit + 1)
          .toArray();
        hasOlder = docs.length > q.limit;
        docs = docs.slice(0, q.limit);
      }
      const excluded = tokens ? await events.countDocuments(excludedFilter(q)) : 0;
      return { events: docs.map((d) => summaryDocs.read(d)), hasOlder, searchExcludedMetadataOnlyCount: excluded };
    },
  };
}
