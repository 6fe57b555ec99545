import { Readable } from "node:stream";
import type { Event } from "@whc/contracts";
import { AppError } from "@whc/errors";
import { exportEventsQuery, FROM_START, NDJSON_MEDIA_TYPE, type EventDetailJson, type ExportEventsQuery } from "@whc/api-model";
import type { GatewayDeps } from "../../deps.js";
import { route, type Route } from "../../route.js";
import { recordAfter } from "../../audit.js";
import { destinationNamesOf } from "@whc/api-model/present";
import { openEventDetail } from "./event-detail.js";
import { cursorOf, listEventsRequest, searchTokensOf, type CatalogCursor } from "./event-query.js";

/** Events asked of the catalog at a time (its limit is 1000); only their summaries are held. */
const PAGE_SIZE = 500;
/** Event reads in flight at once: enough to hide a round trip, few enough that bodies stay few. */
const READS_IN_FLIGHT = 8;
/**
 * Lines go out joined into writes of about this many characters, not one write (one HTTP chunk)
 * each: Node's fetch (undici 6) copies everything its socket holds for every chunk it parses once
 * its reader falls behind, so thousands of line-sized chunks buffered made an export crawl at
 * under 1 MB/s and never catch up (ADR 0095); 64 KiB chunks stream at the reader's pace.
 */
const CHUNK_CHARS = 64 * 1024;
/** Chunks the stream holds ahead of the socket; the socket's own buffer comes on top. */
const CHUNKS_AHEAD = 2;
/** WHC_EXPORT_IDLE_S's default, in ms. */
export const EXPORT_IDLE_MS = 120_000;

const START: CatalogCursor = { receivedAtMs: BigInt(Date.parse(FROM_START.at)), id: FROM_START.id };

/**
 * `work` applied to each item with up to `width` calls in flight, results in the items' order.
 * A call's failure is thrown where its result is due; the ones still running are left to end
 * unobserved (their failure is swallowed, nobody waits for it).
 */
async function* inOrder<T, R>(items: readonly T[], width: number, work: (item: T) => Promise<R>): AsyncGenerator<R> {
  const running: Promise<R>[] = [];
  let next = 0;
  const start = () => {
    const call = work(items[next++]!);
    call.catch(() => {});
    running.push(call);
  };
  while (next < items.length && running.length < width) start();
  while (running.length > 0) {
    const result = await running.shift()!;
    if (next < items.length) start();
    yield result;
  }
}

interface ExportScope {
  accountId: string;
  endpointId: string;
  query: ExportEventsQuery;
  tokens: Uint8Array[] | undefined;
  /** Told once the export ends: how many lines went out, and whether it ran to its end. */
  ended(count: number, complete: boolean): Promise<void>;
}

/**
 * Every matching event's detail as one line of JSON, oldest first by (receivedAt, id): pages of
 * summaries walked forward with the `after` cursor, each event then read whole and opened. An
 * event deleted between its page and its read is left out. Memory holds one page of summaries
 * and the few details in flight, however many events there are.
 */
async function* exportLines(deps: GatewayDeps, scope: ExportScope): AsyncGenerator<string> {
  const { accountId, endpointId, query, tokens } = scope;
  let after: CatalogCursor = cursorOf(query.after, query.afterId) ?? START;
  // The deliveries' names, read once for the whole export.
  const names = destinationNamesOf((await deps.catalog.getEndpoint({ accountId, endpointId })).endpoint);
  const detailOf = async (e: Event): Promise<EventDetailJson | undefined> => {
    try {
      const { event } = await deps.catalog.getEvent({ accountId, endpointId, eventId: e.id, markRead: false });
      return await openEventDetail(deps.opener, event!, names);
    } catch (err) {
      if (AppError.is(err) && err.reason === "not_found") return undefined;
      throw err;
    }
  };
  for (;;) {
    const page = await deps.catalog.listEvents(listEventsRequest(accountId, endpointId, query, tokens, PAGE_SIZE, after));
    // A page walked forward comes newest first, like every page of the list.
    const oldestFirst = page.events.reverse();
    for await (const detail of inOrder(oldestFirst, READS_IN_FLIGHT, detailOf)) {
      if (detail) yield `${JSON.stringify(detail)}\n`;
    }
    const newest = oldestFirst.at(-1);
    if (!newest || oldestFirst.length < PAGE_SIZE) return;
    after = { receivedAtMs: newest.receivedAtMs, id: newest.id };
  }
}

/**
 * The first line is made before the answer starts, so that a refusal (no such endpoint, the
 * catalog or crypto down) is an ordinary JSON error reply; a failure after it cuts the
 * connection without the chunked terminator, which every HTTP client reports as an error.
 */
async function exportStream(deps: GatewayDeps, scope: ExportScope): Promise<Readable | string> {
  const lines = exportLines(deps, scope);
  const first = await lines.next();
  if (first.done) {
    await scope.ended(0, true);
    return "";
  }
  let count = 0;
  let complete = false;
  async function* all(): AsyncGenerator<string> {
    let held: string[] = [first.value as string];
    let heldChars = held[0]!.length;
    // A line counts once it is handed to the socket.
    async function* release() {
      const chunk = held;
      held = [];
      heldChars = 0;
      yield chunk.join("");
      count += chunk.length;
    }
    try {
      for await (const line of lines) {
        held.push(line);
        heldChars += line.length;
        if (heldChars >= CHUNK_CHARS) yield* release();
      }
      if (held.length > 0) yield* release();
      complete = true;
    } catch (err) {
      deps.logger.warn({ err, endpointId: scope.endpointId, exported: count }, "export cut short");
      throw err;
    } finally {
      await lines.return(undefined);
      // A hang-up ends the stream here too: what went out is recorded either way.
      await scope.ended(count, complete);
    }
  }
  return Readable.from(all(), { objectMode: true, highWaterMark: CHUNKS_AHEAD });
}

/** `GET /v1/endpoints/{endpointId}/events/export` (extension): every matching event's detail, NDJSON. */
export function exportRoute(deps: GatewayDeps, idleMs: number): Route {
  return route({
    method: "GET",
    path: "/v1/endpoints/{endpointId}/events/export",
    scope: "events:read",
    operationId: "exportEvents",
    summary: "Export events as NDJSON",
    description:
      "Every matching event's full detail (the JSON `GET .../events/{eventId}` answers, bodies decrypted), one per " +
      "line, **oldest first**, streamed: for backups and moving data (`whc events export` is its client). Takes the " +
      "list's filters and cursors, not `limit` or `wait`. Reading does not set `readAt`.\n\n" +
      "A refusal (400, 404, 503) comes before the first line, as a JSON error reply. A failure after it cannot change " +
      "the status: the connection is closed without the chunked terminator, which HTTP clients report as an error; " +
      "resume with `after`/`afterId` set to the last line's `receivedAt` and `id`.",
    tags: ["events"],
    extension: true,
    query: exportEventsQuery,
    success: {
      status: 200,
      contentType: NDJSON_MEDIA_TYPE,
      description:
        "One EventDetail (operation 6's JSON, bodies decrypted) per line, oldest first by (receivedAt, id); empty when nothing matches. " +
        "Reading it does not set readAt. A complete export ends with the chunked terminator; one cut short by a failure is closed " +
        "without it, which HTTP clients report as an error (curl: exit 18; fetch: the body's reader throws). Resume with " +
        "after/afterId set to the last line's receivedAt and id.",
    },
    errors: [400],
    async handler(ctx, { auth, params, query }) {
      const tokens = await searchTokensOf(deps, query.search);
      const endpointId = params.endpointId!;
      // The export is many catalog calls: its entry, with the count, is written at its end (ADR 0053).
      const ended = (count: number, complete: boolean) => recordAfter(deps, ctx, auth, { action: "events.exported", endpointId, details: { count, complete } });
      const body = await exportStream(deps, { accountId: auth.accountId, endpointId, query, tokens, ended });
      // A socket with no traffic either way for idleMs is destroyed by Node's server (no one
      // listens for 'timeout'): a reader that stopped reading, or an export stuck on the catalog,
      // is cut like any failure after the first line. Node sets its own timeout back once the
      // answer ends (keep-alive).
      ctx.req.socket.setTimeout(idleMs);
      ctx.type = NDJSON_MEDIA_TYPE;
      return body;
    },
  });
}
