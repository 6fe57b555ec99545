/**
 * The page's address: every view is a hash route, so a link survives a reload and can be sent
 * to a teammate (the gateway serves index.html for `/` only; the hash never reaches it, and
 * never carries the key). ADR 0020.
 *
 *   #/                                         the endpoint list
 *   #/<page>                                   an account-wide page (#/new, later #/keys, #/audit)
 *   #/endpoints/<id>[/<tab>]                   an endpoint: events (default), charts, settings
 *   #/endpoints/<id>/events/<eventId>[/<tab>]  an event: body (default), headers, diagnosis...
 *   ...?q=refund&status=failed&view=hex        the events' filters and a tab's own options
 */
export interface Route {
  /** An account-wide page's segment; "" for the endpoint list and every endpoint route. */
  page: string;
  endpointId?: string;
  /** The endpoint's tab; "" when none was named (its first tab). */
  tab: string;
  eventId?: string;
  /** The event's tab; "" when none was named (its first tab). */
  eventTab: string;
  /** Filters and view options, in a stable order. */
  query: Readonly<Record<string, string>>;
}

export const HOME: Route = { page: "", tab: "", eventTab: "", query: {} };

const decode = (s: string): string => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

export function parseRoute(hash: string): Route {
  const text = hash.replace(/^#/, "");
  const q = text.indexOf("?");
  const segments = (q < 0 ? text : text.slice(0, q)).split("/").filter(Boolean).map(decode);
  const query: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(q < 0 ? "" : text.slice(q + 1))) if (value !== "") query[name] = value;
  const [first, endpointId, second, eventId, eventTab] = segments;
  if (first !== "endpoints" || !endpointId) return { ...HOME, page: first ?? "", query };
  if (second === "events" && eventId) return { page: "", endpointId, tab: "events", eventId, eventTab: eventTab ?? "", query };
  return { page: "", endpointId, tab: second ?? "", eventTab: "", query };
}

/** The hash of `route`: the inverse of parseRoute, with empty parts left out. */
export function formatRoute(route: Partial<Route>): string {
  const seg = encodeURIComponent;
  let path = "/";
  if (route.endpointId) {
    path = `/endpoints/${seg(route.endpointId)}`;
    if (route.eventId) path += `/events/${seg(route.eventId)}${route.eventTab ? `/${seg(route.eventTab)}` : ""}`;
    else if (route.tab) path += `/${seg(route.tab)}`;
  } else if (route.page) path = `/${seg(route.page)}`;
  const params = new URLSearchParams(Object.entries(route.query ?? {}).filter(([, v]) => v !== ""));
  const query = params.toString();
  return `#${path}${query ? `?${query}` : ""}`;
}

/** The query with `changes` applied; an empty value removes its name. */
export function withQuery(query: Readonly<Record<string, string>>, changes: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = { ...query };
  for (const [name, value] of Object.entries(changes)) {
    if (value) out[name] = value;
    else delete out[name];
  }
  return out;
}
