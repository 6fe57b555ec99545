import type { Context } from "koa";
import type { Client } from "@connectrpc/connect";
import type { CryptoService, Event, ListEventsResponse } from "@whc/contracts";
import { eventDetail, eventList, listEventsQuery, type EventListJson, type ListEventsQuery } from "@whc/api-model";
import { destinationNamesOf, eventSummaryJson, isoTime } from "@whc/api-model/present";
import type { GatewayDeps, GatewayOptions } from "../../deps.js";
import { route, type Route } from "../../route.js";
import { openEventDetail } from "./event-detail.js";
import { EXPORT_IDLE_MS, exportRoute } from "./event-export.js";
import { listEventsRequest, ms, searchTokensOf } from "./event-query.js";
import { createKeySlots } from "../../key-quotas.js";
import { auditContext } from "../../audit.js";

/**
 * The master key ids crypto still holds, cached; unknown (undefined) while crypto is down.
 * A failed refresh is remembered for the same time, so a crypto outage never slows lists.
 */
function createKeyIdsCache(crypto: Client<typeof CryptoService>, ttlMs = 30_000) {
  let ids: Set<string> | undefined;
  let checkedAt = -Infinity;
  return async (): Promise<Set<string> | undefined> => {
    if (Date.now() - checkedAt < ttlMs) return ids;
    checkedAt = Date.now();
    try {
      ids = new Set((await crypto.listMasterKeys({}, { timeoutMs: 1000 })).keyIds);
    } catch {
      // keep what we knew
    }
    return ids;
  };
}

/** Resolves on the first of: a capture notice, the re-query interval, the deadline, a hang-up. */
function pause(ctx: Context, waitMs: number, arm: (wake: () => void) => void, shutdown?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, waitMs);
    function done() {
      clearTimeout(timer);
      ctx.req.off("close", done);
      shutdown?.removeEventListener("abort", done);
      resolve();
    }
    ctx.req.once("close", done);
    shutdown?.addEventListener("abort", done);
    arm(done);
  });
}

/** Operations 5-7. */
export function eventRoutes(deps: GatewayDeps, options: GatewayOptions): Route[] {
  const { catalog, bus } = deps;
  const knownKeyIds = createKeyIdsCache(deps.crypto);
  const waits = createKeySlots("waits", options.quotas.waitsPerKey);

  const queryPage = (accountId: string, endpointId: string, q: ListEventsQuery, tokens: Uint8Array[] | undefined) =>
    catalog.listEvents(listEventsRequest(accountId, endpointId, q, tokens, q.limit ?? 50));

  /** The page, held up to `wait` seconds while it is empty (a capture notice wakes it early). */
  async function waitForPage(ctx: Context, accountId: string, endpointId: string, q: ListEventsQuery, tokens: Uint8Array[] | undefined) {
    let wake: (() => void) | undefined;
    // A notice may arrive while a query runs, when there is no pause to wake: remember it.
    let noticed = false;
    const waitMs = (q.wait ?? 0) * 1000;
    // Subscribe before the first query, so a capture between the two is not missed.
    const unsubscribe =
      waitMs > 0
        ? bus.subscribeCaptures(accountId, endpointId, () => {
            noticed = true;
            wake?.();
          })
        : undefined;
    try {
      let page: ListEventsResponse = await queryPage(accountId, endpointId, q, tokens);
      const deadline = Date.now() + waitMs;
      while (page.events.length === 0 && Date.now() < deadline && !ctx.req.destroyed && !options.shutdownSignal?.aborted) {
        if (!noticed) {
          const interval = bus.connected() ? options.waitPollMs * 5 : options.waitPollMs;
          await pause(ctx, Math.min(interval, deadline - Date.now()), (w) => (wake = w), options.shutdownSignal);
        }
        noticed = false;
        wake = undefined;
        page = await queryPage(accountId, endpointId, q, tokens);
      }
      return page;
    } finally {
      unsubscribe?.();
    }
  }

  return [
    route({
      method: "GET",
      path: "/v1/endpoints/{endpointId}/events",
      scope: "events:read",
      operationId: "listEvents",
      summary: "List an endpoint's events",
      description:
        "A page of the endpoint's events, newest first by (`receivedAt`, `id`). Filters combine: `from` and `to` on " +
        "`receivedAt`, `eventType`, `provider`, `responseCode`, `status` (the signature verdict), `forwardState`, and " +
        "`search`, which needs every word in the body (metadata-only events cannot match; they are counted in " +
        "`searchExcludedMetadataOnlyCount`).\n\n" +
        "Page to older events with `before`/`beforeId` set to the answer's `nextBefore`/`nextBeforeId`; poll for newer " +
        "ones with `after`/`afterId` set to `nextAfter`/`nextAfterId`. With `wait`, an empty page is held up to that many " +
        "seconds until a capture arrives: a long poll that tails the endpoint.\n\n" +
        "Errors: 400 `validation_failed` for a bad or unknown query parameter, or a cursor half without its pair.",
      tags: ["events"],
      query: listEventsQuery,
      success: { status: 200, schema: eventList, description: "Newest first by (receivedAt, id)." },
      errors: [400],
      async handler(ctx, { auth, params, query: q }): Promise<EventListJson> {
        const endpointId = params.endpointId!;
        const tokens = await searchTokensOf(deps, q.search);
        const searching = tokens !== undefined;
        // A long poll holds one of the key's `wait` slots for as long as it is held (ADR 0035).
        const holds = (q.wait ?? 0) > 0;
        if (holds) waits.acquire(auth.keyId);
        let page: ListEventsResponse;
        try {
          page = await waitForPage(ctx, auth.accountId, endpointId, q, tokens);
        } finally {
          if (holds) waits.release(auth.keyId);
        }
        const keyIds = await knownKeyIds();
        const items = page.events.map((e) => eventSummaryJson(e, { knownKeyIds: keyIds, search: searching }));
        const newest: Event | undefined = page.events[0];
        const oldest: Event | undefined = page.events[page.events.length - 1];
        return {
          items,
          ...(page.hasOlder && oldest ? { nextBefore: isoTime(oldest.receivedAtMs), nextBeforeId: oldest.id } : {}),
          ...(newest
            ? { nextAfter: isoTime(newest.receivedAtMs), nextAfterId: newest.id }
            : q.after && q.afterId
              ? { nextAfter: isoTime(ms(q.after)!), nextAfterId: q.afterId.toLowerCase() }
              : {}),
          ...(searching ? { searchExcludedMetadataOnlyCount: page.searchExcludedMetadataOnlyCount } : {}),
        };
      },
    }),
    // Before the event read, whose {eventId} would otherwise take "export".
    exportRoute(deps, options.exportIdleMs ?? EXPORT_IDLE_MS),
    route({
      method: "GET",
      path: "/v1/endpoints/{endpointId}/events/{eventId}",
      scope: "events:read",
      operationId: "getEvent",
      summary: "Get an event",
      description:
        "One captured request whole: its headers (names as sent, repeats grouped), sub-path and query (`path`), body " +
        "decrypted (UTF-8 text, else base64: see `bodyEncoding`), the sender's address, what ingest diagnosed (the " +
        "signature checks and the likely cause of a failure, the content type) and, for a forwarded event, its delivery " +
        "attempts. The first read sets `readAt`. A body whose key has left the key ring reads as `decryption: \"failed\"` " +
        "rather than failing the request.",
      tags: ["events"],
      success: { status: 200, schema: eventDetail, description: "The event, body decrypted; sets readAt." },
      errors: [400],
      async handler(ctx, { auth, params }) {
        const { endpointId, eventId } = params as { endpointId: string; eventId: string };
        // The detail holds the body: the read is audited (event.read), in the same catalog call.
        const audit = auditContext(ctx, auth, undefined, "event.read");
        const { event } = await catalog.getEvent({ accountId: auth.accountId, endpointId, eventId, markRead: true, audit });
        // A forwarded event names its deliveries by their destinations' names (design §17).
        const names = event!.deliveries.length > 0 ? destinationNamesOf((await catalog.getEndpoint({ accountId: auth.accountId, endpointId })).endpoint) : undefined;
        return openEventDetail(deps.opener, event!, names);
      },
    }),
    route({
      method: "DELETE",
      path: "/v1/endpoints/{endpointId}/events/{eventId}",
      scope: "events:write",
      operationId: "deleteEvent",
      summary: "Delete an event",
      description:
        "Deletes the event with its body. Idempotent: 204 even when the event is already gone, as long as the endpoint " +
        "exists.",
      tags: ["events"],
      success: { status: 204, description: "Deleted (idempotent)." },
      errors: [400],
      async handler(ctx, { auth, params }) {
        await catalog.deleteEvent({ accountId: auth.accountId, endpointId: params.endpointId!, eventId: params.eventId!, audit: auditContext(ctx, auth) });
      },
    }),
  ];
}
