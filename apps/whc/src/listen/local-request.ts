import { ATTEMPT_HEADER, DELIVERY_ID_HEADER, NOT_SENT_ON_HEADERS, type EventDetailJson, type ForwardedResponseJson } from "@whc/api-model";

/** What `whc listen` sends to the local app for one event. */
export interface LocalRequest {
  /** Scheme, host and port of the local app. */
  origin: URL;
  /** The request target as sent, byte for byte (one character per byte). */
  path: string;
  method: string;
  /** In the order captured; values one character per byte. */
  headers: [name: string, value: string][];
  body: Uint8Array;
}

/**
 * The captured headers that are not sent on: the ones that described the capture's own hop
 * (the set replay leaves out), those this request computes itself, and any delivery headers
 * of an earlier forward, replaced by this one's.
 */
const NOT_FORWARDED = new Set<string>([
  ...NOT_SENT_ON_HEADERS,
  DELIVERY_ID_HEADER.toLowerCase(),
  ATTEMPT_HEADER.toLowerCase(),
]);

/**
 * `--forward-to` followed by the capture's sub-path and query: `http://localhost:3000/hooks`
 * and `/ci?x=1` give `/hooks/ci?x=1`; a query of `--forward-to` itself comes first. The
 * capture's part is kept as it arrived, never re-encoded.
 */
export function localTarget(forwardTo: URL, capturePath: string): string {
  const cut = capturePath.search(/[?#]/);
  const sub = cut < 0 ? capturePath : capturePath.slice(0, cut);
  const query = cut >= 0 && capturePath[cut] === "?" ? capturePath.slice(cut + 1).replace(/#.*$/s, "") : undefined;
  let path = forwardTo.pathname;
  if (sub) path = `${path.replace(/\/+$/, "")}${sub.startsWith("/") ? "" : "/"}${sub}`;
  const queries = [forwardTo.search.slice(1), query].filter((q): q is string => q !== undefined && q !== "");
  if (queries.length) return `${path}?${queries.join("&")}`;
  // `/ci?` stays `/ci?`: the capture is sent as it came.
  return query !== undefined && !forwardTo.search ? `${path}?` : path;
}

/**
 * A header value as it goes on the wire. The API shows values that were UTF-8 as text
 * (`café`); they are sent as those UTF-8 bytes again. (A value that was not UTF-8 shows as
 * one character per byte; its bytes above 0x7f are sent UTF-8 encoded too: such headers are
 * all but unknown among webhook senders.)
 */
export function wireValue(value: string): string {
  return !/[\u0080-\uffff]/.test(value) ? value : Buffer.from(value, "utf8").toString("latin1");
}

/** The stored body's exact bytes, from the detail's text or base64. */
export function bodyBytes(detail: Pick<EventDetailJson, "body" | "bodyEncoding">): Uint8Array | undefined {
  if (detail.body === undefined) return undefined;
  return detail.bodyEncoding === "base64" ? Buffer.from(detail.body, "base64") : Buffer.from(detail.body, "utf8");
}

/** The next attempt number, as the API will number it (no other attempt running at the same time). */
export function nextAttemptNumber(detail: Pick<EventDetailJson, "forwardedResponse">): number {
  const attempts = (detail.forwardedResponse as Partial<ForwardedResponseJson>).attempts ?? [];
  return Math.max(0, ...attempts.map((a) => a.n)) + 1;
}

export interface LocalRequestInput {
  forwardTo: URL;
  /** The event; its `path` (sub-path and query after the webhook URL) is appended to forwardTo. */
  detail: EventDetailJson;
  body: Uint8Array;
  attempt: number;
}

/** Whether a captured header goes out again when the request is sent on (listen, scenarios). */
export function isSentOn(name: string): boolean {
  return !NOT_FORWARDED.has(name.toLowerCase());
}

export function localRequest({ forwardTo, detail, body, attempt }: LocalRequestInput): LocalRequest {
  const headers: [string, string][] = [];
  for (const [name, values] of Object.entries(detail.headers)) {
    if (!isSentOn(name)) continue;
    for (const value of values) headers.push([name, wireValue(value)]);
  }
  headers.push([DELIVERY_ID_HEADER, detail.id], [ATTEMPT_HEADER, String(attempt)]);
  return { origin: new URL(forwardTo.origin), path: localTarget(forwardTo, detail.path), method: detail.method, headers, body };
}
