import { AppError } from "@whc/errors";
import { eventDiff, eventDiffQuery, type EventDetailJson, type EventDiffJson } from "@whc/api-model";
import type { GatewayDeps } from "../../deps.js";
import { compareRequests, type ComparedRequest } from "../../event-compare.js";
import { route, type Route } from "../../route.js";
import { openEventDetail } from "./event-detail.js";

/** Endpoints read a page at a time, and events looked for at once, while `with` is searched across the account. */
const SEARCH = { page: 100, inFlight: 8 } as const;

const isNotFound = (err: unknown) => AppError.is(err) && err.reason === "not_found";

async function detailOf(deps: GatewayDeps, accountId: string, endpointId: string, eventId: string): Promise<EventDetailJson | undefined> {
  try {
    const { event } = await deps.catalog.getEvent({ accountId, endpointId, eventId, markRead: false });
    return await openEventDetail(deps.opener, event!);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * `with` in the account: first in the path's endpoint (the usual case), then through the
 * account's other endpoints, a page at a time (ADR 0071: the catalog has no read of an event by
 * account and id alone yet).
 */
async function findWith(deps: GatewayDeps, accountId: string, endpointId: string, eventId: string): Promise<EventDetailJson> {
  const here = await detailOf(deps, accountId, endpointId, eventId);
  if (here) return here;
  let after = "";
  for (;;) {
    const page = await deps.catalog.listEndpoints({ accountId, after, limit: SEARCH.page });
    const others = page.endpoints.map((e) => e.id).filter((id) => id !== endpointId);
    for (let i = 0; i < others.length; i += SEARCH.inFlight) {
      const found = (await Promise.all(others.slice(i, i + SEARCH.inFlight).map((id) => detailOf(deps, accountId, id, eventId)))).find(Boolean);
      if (found) return found;
    }
    if (!page.hasMore || page.endpoints.length === 0) throw new AppError("not_found", "the event of `with` is not in this account");
    after = page.endpoints.at(-1)!.id;
  }
}

function compared(d: EventDetailJson): ComparedRequest {
  const body = d.body === undefined ? undefined : Buffer.from(d.body, d.bodyEncoding === "base64" ? "base64" : "utf8");
  return { method: d.method, path: d.path, headers: d.headers, body };
}

/** `GET .../diff` (design §19): what changed between two captured requests. */
export function eventDiffRoutes(deps: GatewayDeps): Route[] {
  return [
    route({
      method: "GET",
      path: "/v1/endpoints/{endpointId}/events/{eventId}/diff",
      scope: "events:read",
      operationId: "diffEvents",
      summary: "Compare two events",
      description:
        "What changed from the event of the path (`from`) to the event `with` (`to`), which may belong to any endpoint of " +
        "the account: the method, the sub-path, the query parameters, the headers (names case-insensitive) and the body. " +
        "JSON bodies are compared structurally (objects by key, arrays by index), UTF-8 text by lines, anything else by size " +
        "and SHA-256. Each change is a JSON Patch-like operation with a JSON Pointer `path` (`/body/data/amount`, " +
        "`/headers/stripe-signature`, `/query/page`) and the values on each side. `ignore` leaves paths out (dotted: " +
        "`headers.date,body.created`), each with everything under it. Neither event is marked read.\n\n" +
        "Errors: 404 `not_found` when either event is not in the account; 400 `validation_failed` on `with` or `ignore`.",
      tags: ["events"],
      extension: true,
      query: eventDiffQuery,
      success: { status: 200, schema: eventDiff, description: "The changes from the event to `with`; `same` when there are none." },
      errors: [400],
      async handler(_ctx, { auth, params, query }): Promise<EventDiffJson> {
        const { endpointId, eventId } = params as { endpointId: string; eventId: string };
        const from = await detailOf(deps, auth.accountId, endpointId, eventId);
        if (!from) throw new AppError("not_found", "event not found");
        const to = await findWith(deps, auth.accountId, endpointId, query.with.toLowerCase());
        return compareRequests(compared(from), compared(to), query.ignore ?? []);
      },
    }),
  ];
}
