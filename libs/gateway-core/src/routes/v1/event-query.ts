import type { Client } from "@connectrpc/connect";
import type { CatalogService } from "@whc/contracts";
import type { ExportEventsQuery } from "@whc/api-model";
import type { GatewayDeps } from "../../deps.js";

/** What the list and the export both send the catalog: its filters and cursors. */
export type ListEventsRequest = Parameters<Client<typeof CatalogService>["listEvents"]>[0];

/** A cursor of the catalog: (receivedAt in ms, event id). */
export interface CatalogCursor {
  receivedAtMs: bigint;
  id: string;
}

export function ms(text: string | undefined): number | undefined {
  return text === undefined ? undefined : Date.parse(text);
}

/** The cursor of a `time` and `id` pair of the query, if both are there. */
export function cursorOf(at: string | undefined, id: string | undefined): CatalogCursor | undefined {
  return at && id ? { receivedAtMs: BigInt(ms(at)!), id: id.toLowerCase() } : undefined;
}

/**
 * The catalog query of the list's filters and cursors (operation 5's query, which the export
 * shares); `tokens` are the search words' blind-index tokens, undefined when not searching.
 * `afterOverride` replaces the query's own `after` pair (the export walks forward from it).
 */
export function listEventsRequest(
  accountId: string,
  endpointId: string,
  q: ExportEventsQuery,
  tokens: Uint8Array[] | undefined,
  limit: number,
  afterOverride?: CatalogCursor,
): ListEventsRequest {
  const before = cursorOf(q.before, q.beforeId);
  const after = afterOverride ?? cursorOf(q.after, q.afterId);
  return {
    accountId,
    endpointId,
    ...(before ? { before } : {}),
    ...(after ? { after } : {}),
    fromMs: q.from === undefined ? undefined : BigInt(ms(q.from)!),
    toMs: q.to === undefined ? undefined : BigInt(ms(q.to)!),
    eventType: q.eventType,
    provider: q.provider,
    responseCode: q.responseCode,
    verification: q.status,
    forwardState: q.forwardState,
    schemaDrift: q.schemaDrift,
    duplicate: q.duplicate,
    destinationId: q.destinationId?.toLowerCase(),
    search: tokens !== undefined,
    searchTokens: tokens ?? [],
    limit,
  };
}

/** The search words' tokens, or undefined when the query searches nothing (blank counts as nothing). */
export async function searchTokensOf(deps: Pick<GatewayDeps, "blindIndex">, search: string | undefined): Promise<Uint8Array[] | undefined> {
  if (search === undefined || search.trim() === "") return undefined;
  return (await deps.blindIndex())(search);
}
