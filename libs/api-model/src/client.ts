import type { CreateEndpointRequest, EndpointJson, EndpointListJson, ListEndpointsQueryText, UpdateEndpointRequest } from "./endpoints.js";
import type { TestDestinationRequest, TestDestinationResultJson } from "./destinations.js";
import type { EventDetailJson, EventListJson, EventSummaryJson, ExportEventsQueryText, ListEventsQueryText } from "./events.js";
import type { CurlExportJson, ReplayRequest, ReplayResultJson } from "./event-actions.js";
import { ENDPOINT_PAGE_MAX, NDJSON_MEDIA_TYPE } from "./values.js";
import type { ProviderListJson, TriggerRequestJson, TriggerResultJson } from "./providers.js";
import type { ForwardAttemptJson, RecordAttemptRequest } from "./forwarding.js";
import type { EventSignatureJson, EventSignatureRequest } from "./event-signature.js";
import type { EventDiffJson, EventDiffQueryText } from "./event-diff.js";
import type { ListenerHeartbeatRequest, ListenerJson, ListenerListJson } from "./listeners.js";
import type { JsonSchemaDocument, SchemaListJson } from "./schemas.js";
import type { ApiKeyListJson, CreateApiKeyRequest, CreatedApiKeyJson } from "./keys.js";
import type { AuditListJson, ConfigAppliedRequest, ListAuditQueryText } from "./audit.js";
import type { AlertChannelListJson, AlertTestJson, CreateAlertChannelRequest, CreatedAlertChannelJson } from "./alerts.js";
import type { RedeliveryCountJson, RedeliveryFilterJson, RedeliveryJobJson, RedeliveryJobListJson } from "./redeliveries.js";

/**
 * The one typed client of /v1, for the dashboard, the CLI and tests. It runs wherever `fetch`
 * does (browsers, Node 20): no Node imports.
 */

const brand = Symbol.for("webhook-capture.ApiError");

/** An error reply of /v1, or `unreachable` (status 0) when no answer came back. */
export class ApiError extends Error {
  readonly [brand] = true;
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string,
    readonly details: Record<string, unknown> = {},
    readonly headers?: Headers,
  ) {
    super(message);
    this.name = "ApiError";
  }
  /** Survives duplicate copies of this module, unlike instanceof. */
  static is(value: unknown): value is ApiError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[brand] === true;
  }
  /** Worth retrying: no answer, or the service said it is unavailable for now. */
  get transient(): boolean {
    return this.status === 0 || this.status === 502 || this.status === 503 || this.status === 504;
  }
  /**
   * Milliseconds the key must wait after a refusal of its request rate or of one `wait` too
   * many (429 quota_exceeded with Retry-After); undefined for every other answer.
   */
  get throttledForMs(): number | undefined {
    if (this.status !== 429 || this.code !== "quota_exceeded") return undefined;
    const seconds = Number(this.headers?.get("retry-after"));
    return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : undefined;
  }
}

export interface ApiClientOptions {
  /** Where /v1 lives: `http://localhost:8080`, or "" for the page's own origin. */
  baseUrl: string;
  /** The API key, or a function read at each call (the dashboard's key can change). */
  apiKey?: string | (() => string | null | undefined);
  /** Sent with every call. */
  headers?: Record<string, string>;
  fetch?: typeof fetch;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export interface Cursor {
  at: string;
  id: string;
}

/** Before every event: following from here delivers every event the endpoint has. */
export const FROM_START: Cursor = { at: new Date(0).toISOString(), id: "00000000-0000-0000-0000-000000000000" };

/**
 * Where to follow from after showing a page: its newest event, or the start when it was empty
 * (so a capture arriving between the page and the first long poll is not missed).
 */
export function cursorAfter(page: EventListJson): Cursor {
  return page.nextAfter && page.nextAfterId ? { at: page.nextAfter, id: page.nextAfterId } : FROM_START;
}

export interface FollowOptions {
  /** Start strictly after this event; default: after the newest event at the time of the first call. */
  after?: Cursor;
  /** Filters of the list (not the cursors, wait or limit). */
  filters?: Omit<ListEventsQueryText, "before" | "beforeId" | "after" | "afterId" | "wait" | "limit">;
  /** Long-poll length, seconds (0-60). */
  waitSeconds?: number;
  /** Page size per call (1-200). */
  limit?: number;
  /** First and largest pause after a failed call, doubled in between. */
  backoff?: { initialMs: number; maxMs: number };
  /** Told before each pause after a transient failure. */
  onRetry?: (error: ApiError, delayMs: number) => void;
  /** Told when a call is answered again after one or more transient failures, with how long they lasted. */
  onRecovered?: (outageMs: number) => void;
  /** Called with the cursor after each delivered page, e.g. to save it. */
  onCursor?: (cursor: Cursor) => void;
  signal?: AbortSignal;
}

const FOLLOW_DEFAULTS = { waitSeconds: 25, limit: 200, backoff: { initialMs: 1000, maxMs: 15_000 } };

function queryString(query: RequestOptions["query"]): string {
  if (!query) return "";
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  const text = params.toString();
  return text ? `?${text}` : "";
}

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("aborted", "AbortError");
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener("abort", stop);
      resolve();
    }
    function stop() {
      clearTimeout(timer);
      reject(abortError(signal!));
    }
    signal?.addEventListener("abort", stop, { once: true });
  });
}

const seg = encodeURIComponent;

/** `fetch failed (ECONNREFUSED)`: Node's fetch names the cause of a failed connection only there. */
function failureText(err: unknown): string {
  const message = (err as { message?: unknown }).message;
  const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
  const why = typeof cause?.code === "string" ? cause.code : typeof cause?.message === "string" ? cause.message : undefined;
  return `${typeof message === "string" ? message : String(err)}${why ? ` (${why})` : ""}`;
}

type ListEvents = (endpointId: string, query: ListEventsQueryText, signal?: AbortSignal) => Promise<EventListJson>;

/** The client's follow(), over its events.list. */
function createFollow(list: ListEvents) {
  /**
   * New captures of an endpoint, oldest first, each once, for as long as the caller iterates:
   * long polls with the `after` cursor, and pauses (doubling, up to `backoff.maxMs`) while the
   * API is unreachable or unavailable, and for Retry-After when the key is throttled (its
   * request rate or its `wait` polls). Other errors end the iteration by throwing.
   */
  return async function* follow(endpointId: string, o: FollowOptions = {}): AsyncGenerator<EventSummaryJson, void, undefined> {
    const waitSeconds = o.waitSeconds ?? FOLLOW_DEFAULTS.waitSeconds;
    const limit = o.limit ?? FOLLOW_DEFAULTS.limit;
    const backoff = o.backoff ?? FOLLOW_DEFAULTS.backoff;
    let cursor = o.after;
    let started = cursor !== undefined;
    let delay = backoff.initialMs;
    let failingSince: number | undefined;
    while (!o.signal?.aborted) {
      let page: EventListJson;
      try {
        if (!started) {
          // Where "now" is: the newest event so far; an empty endpoint starts with no cursor.
          const newest = await list(endpointId, { ...o.filters, limit: "1" }, o.signal);
          if (newest.nextAfter && newest.nextAfterId) cursor = { at: newest.nextAfter, id: newest.nextAfterId };
          started = true;
        }
        page = await list(
          endpointId,
          { ...o.filters, wait: String(waitSeconds), limit: String(limit), ...(cursor ? { after: cursor.at, afterId: cursor.id } : {}) },
          o.signal,
        );
        delay = backoff.initialMs;
        if (failingSince !== undefined) o.onRecovered?.(Date.now() - failingSince);
        failingSince = undefined;
      } catch (err) {
        if (o.signal?.aborted) return;
        if (!ApiError.is(err) || !(err.transient || err.throttledForMs !== undefined)) throw err;
        if (err.transient) failingSince ??= Date.now();
        // A throttled key waits what the gateway asked; an unavailable API, the backoff.
        const pauseMs = err.throttledForMs ?? delay;
        o.onRetry?.(err, pauseMs);
        try {
          await sleep(pauseMs, o.signal);
        } catch {
          return;
        }
        if (err.throttledForMs === undefined) delay = Math.min(delay * 2, backoff.maxMs);
        continue;
      }
      if (page.nextAfter && page.nextAfterId) cursor = { at: page.nextAfter, id: page.nextAfterId };
      for (let i = page.items.length - 1; i >= 0 && !o.signal?.aborted; i--) yield page.items[i]!;
      if (page.items.length > 0 && cursor) o.onCursor?.(cursor);
    }
  };
}

type Request = <T>(method: string, path: string, o?: RequestOptions) => Promise<T>;

/** Bulk redelivery's calls (design §18): count, start, read, list and cancel jobs. */
function redeliveryCalls(request: Request) {
  const path = (endpointId: string, jobId?: string) => `/v1/endpoints/${seg(endpointId)}/redeliveries${jobId === undefined ? "" : `/${seg(jobId)}`}`;
  return {
    /** How many deliveries a job with this filter would redo now; nothing is started. */
    count: (endpointId: string, filter: RedeliveryFilterJson = {}) => request<RedeliveryCountJson>("POST", path(endpointId), { body: { filter, dryRun: true } }),
    start: (endpointId: string, filter: RedeliveryFilterJson = {}) => request<RedeliveryJobJson>("POST", path(endpointId), { body: { filter } }),
    get: (endpointId: string, jobId: string, signal?: AbortSignal) => request<RedeliveryJobJson>("GET", path(endpointId, jobId), { signal }),
    list: (endpointId: string, signal?: AbortSignal) => request<RedeliveryJobListJson>("GET", path(endpointId), { signal }),
    cancel: (endpointId: string, jobId: string) => request<RedeliveryJobJson>("POST", `${path(endpointId, jobId)}/cancel`, { body: {} }),
  };
}

export function createApiClient(options: ApiClientOptions) {
  const base = options.baseUrl.replace(/\/+$/, "");
  const doFetch = options.fetch ?? ((input: string, init?: RequestInit) => fetch(input, init));

  /** Sends one call; a failure to get an answer at all is ApiError `unreachable` (status 0). */
  async function send(method: string, path: string, o: RequestOptions): Promise<Response> {
    const key = typeof options.apiKey === "function" ? options.apiKey() : options.apiKey;
    const headers: Record<string, string> = { ...options.headers, ...o.headers };
    if (key) headers.authorization = `Bearer ${key}`;
    if (o.body !== undefined) headers["content-type"] = "application/json";
    try {
      return await doFetch(`${base}${path}${queryString(o.query)}`, {
        method,
        headers,
        body: o.body === undefined ? undefined : JSON.stringify(o.body),
        signal: o.signal,
      });
    } catch (err) {
      if (o.signal?.aborted) throw err;
      throw new ApiError(0, "unreachable", `Cannot reach ${base || "the API"}: ${failureText(err)}`, "");
    }
  }

  async function readText(res: Response, signal: AbortSignal | undefined): Promise<string> {
    try {
      return await res.text();
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new ApiError(0, "unreachable", `The connection to ${base || "the API"} broke: ${(err as Error).message}`, "");
    }
  }

  function parsed(text: string): unknown {
    try {
      return text ? JSON.parse(text) : undefined;
    } catch {
      return undefined;
    }
  }

  /** The error reply of a failed call as an ApiError. */
  function refusal(res: Response, json: unknown): ApiError {
    const reply = (typeof json === "object" && json !== null ? json : {}) as Record<string, unknown>;
    return new ApiError(
      res.status,
      typeof reply.error === "string" ? reply.error : String(res.status),
      typeof reply.message === "string" ? reply.message : res.statusText,
      typeof reply.requestId === "string" ? reply.requestId : (res.headers.get("x-request-id") ?? ""),
      typeof reply.details === "object" && reply.details !== null ? (reply.details as Record<string, unknown>) : {},
      res.headers,
    );
  }

  async function request<T>(method: string, path: string, o: RequestOptions = {}): Promise<T> {
    const res = await send(method, path, o);
    const json = parsed(await readText(res, o.signal));
    if (!res.ok) throw refusal(res, json);
    return json as T;
  }

  const endpointPage = (query: ListEndpointsQueryText = {}, signal?: AbortSignal) =>
    request<EndpointListJson>("GET", "/v1/endpoints", { query, signal });

  /** Every page of the account's endpoints in turn, by id ascending, following `nextAfter`. */
  async function* endpointPages(o: { limit?: number; signal?: AbortSignal } = {}): AsyncGenerator<EndpointListJson, void, undefined> {
    let after: string | undefined;
    do {
      const page = await endpointPage({ limit: String(o.limit ?? ENDPOINT_PAGE_MAX), ...(after ? { after } : {}) }, o.signal);
      yield page;
      after = page.nextAfter;
    } while (after);
  }

  const endpoints = {
    /** Sends a sample of the endpoint's provider, signed with its secret, to its webhookUrl (design §19). */
    trigger: (endpointId: string, body: TriggerRequestJson) =>
      request<TriggerResultJson>("POST", `/v1/endpoints/${seg(endpointId)}/trigger`, { body }),
    /**
     * The first page of the account's endpoints (up to 100, the server's default page): what
     * this call answered before the list was paged. `all()` or `pages()` reach every endpoint.
     */
    list: (signal?: AbortSignal) => endpointPage({}, signal),
    /** One page: `limit` (1-500) endpoints after the id `after`; `nextAfter` when more follow. */
    page: endpointPage,
    pages: endpointPages,
    /** Every endpoint of the account, by id ascending, in as many calls as it takes (500 per call). */
    all: async (signal?: AbortSignal): Promise<EndpointJson[]> => {
      const items: EndpointJson[] = [];
      for await (const page of endpointPages(signal ? { signal } : {})) items.push(...page.items);
      return items;
    },
    create: (body: CreateEndpointRequest) => request<EndpointJson>("POST", "/v1/endpoints", { body }),
    get: (id: string) => request<EndpointJson>("GET", `/v1/endpoints/${seg(id)}`),
    update: (id: string, body: UpdateEndpointRequest) => request<EndpointJson>("PATCH", `/v1/endpoints/${seg(id)}`, { body }),
    delete: (id: string) => request<void>("DELETE", `/v1/endpoints/${seg(id)}`),
    /** A filter and transform tried on a stored event (design §17); nothing sent or saved. */
    testDestination: (id: string, body: TestDestinationRequest) =>
      request<TestDestinationResultJson>("POST", `/v1/endpoints/${seg(id)}/destinations/test`, { body }),
  };

  const eventsPath = (endpointId: string, eventId?: string) =>
    `/v1/endpoints/${seg(endpointId)}/events${eventId === undefined ? "" : `/${seg(eventId)}`}`;

  const events = {
    list: (endpointId: string, query: ListEventsQueryText = {}, signal?: AbortSignal) =>
      request<EventListJson>("GET", eventsPath(endpointId), { query, signal }),
    get: (endpointId: string, eventId: string) => request<EventDetailJson>("GET", eventsPath(endpointId, eventId)),
    delete: (endpointId: string, eventId: string) => request<void>("DELETE", eventsPath(endpointId, eventId)),
    curl: (endpointId: string, eventId: string, o: { unmasked?: boolean } = {}) =>
      request<CurlExportJson>("GET", `${eventsPath(endpointId, eventId)}/curl`, { query: o.unmasked ? { unmasked: true } : {} }),
    /** Judged by the endpoint's replayFromApi, or its replayFromDashboard when the key has scope `dashboard` (design §14). */
    replay: (endpointId: string, eventId: string, body: ReplayRequest) =>
      request<ReplayResultJson>("POST", `${eventsPath(endpointId, eventId)}/replay`, { body }),
    /** Sends the event to one of the endpoint's destinations now (design §11, §17): the attempt. */
    redeliver: (endpointId: string, eventId: string, o: { destinationId?: string } = {}) =>
      request<ForwardAttemptJson>("POST", `${eventsPath(endpointId, eventId)}/redeliver`, { body: o.destinationId ? { destinationId: o.destinationId } : {} }),
    /**
     * The bulk export (extension): the answer's body, one event detail per line, oldest first,
     * read as it streams. A refusal before the first line throws the ApiError; an export cut
     * short afterwards makes the body's reader throw (the stream never ends cleanly).
     */
    export: async (endpointId: string, query: ExportEventsQueryText = {}, signal?: AbortSignal): Promise<ReadableStream<Uint8Array>> => {
      const res = await send("GET", `${eventsPath(endpointId)}/export`, { query, signal, headers: { accept: NDJSON_MEDIA_TYPE } });
      if (!res.ok) throw refusal(res, parsed(await readText(res, signal)));
      if (!res.body) throw new ApiError(0, "unreachable", "The export answered without a body.", res.headers.get("x-request-id") ?? "");
      return res.body;
    },
    /** Records an attempt the client made itself (whc listen). */
    recordAttempt: (endpointId: string, eventId: string, body: RecordAttemptRequest) =>
      request<ForwardAttemptJson>("POST", `${eventsPath(endpointId, eventId)}/attempts`, { body }),
    /** What changed from the event to `query.with` (design §19). */
    diff: (endpointId: string, eventId: string, query: EventDiffQueryText) =>
      request<EventDiffJson>("GET", `${eventsPath(endpointId, eventId)}/diff`, { query }),
    /** Fresh signature headers for the event's stored body, signed now (design §19). */
    signature: (endpointId: string, eventId: string, body: EventSignatureRequest = {}) =>
      request<EventSignatureJson>("POST", `${eventsPath(endpointId, eventId)}/signature`, { body }),
  };

  const listenersPath = (endpointId: string, listenerId?: string) =>
    `/v1/endpoints/${seg(endpointId)}/listeners${listenerId === undefined ? "" : `/${seg(listenerId)}`}`;

  /** Listener liveness (design §19): who follows an endpoint with `whc listen`. */
  const listeners = {
    list: (endpointId: string, signal?: AbortSignal) => request<ListenerListJson>("GET", listenersPath(endpointId), { signal }),
    /** Registers the listener under its own id, or heartbeats it. */
    heartbeat: (endpointId: string, listenerId: string, body: ListenerHeartbeatRequest, signal?: AbortSignal) =>
      request<ListenerJson>("PUT", listenersPath(endpointId, listenerId), { body, signal }),
    delete: (endpointId: string, listenerId: string, signal?: AbortSignal) => request<void>("DELETE", listenersPath(endpointId, listenerId), { signal }),
  };

  /** Schemas and drift (design §19): what was learned of an endpoint's JSON bodies per event type. */
  const schemas = {
    list: (endpointId: string, signal?: AbortSignal) => request<SchemaListJson>("GET", `/v1/endpoints/${seg(endpointId)}/schemas`, { signal }),
    /** One event type's schema as a JSON Schema (draft 2020-12); `*` for captures without a type. */
    get: (endpointId: string, eventType: string, signal?: AbortSignal) =>
      request<JsonSchemaDocument>("GET", `/v1/endpoints/${seg(endpointId)}/schemas/${seg(eventType)}`, { signal }),
  };

  /** API keys (design §15): those within the calling key's reach. */
  const keys = {
    list: (signal?: AbortSignal) => request<ApiKeyListJson>("GET", "/v1/keys", { signal }),
    /** The answer's `key` is the key itself, shown this once. */
    create: (body: CreateApiKeyRequest) => request<CreatedApiKeyJson>("POST", "/v1/keys", { body }),
    revoke: (id: string) => request<void>("DELETE", `/v1/keys/${seg(id)}`),
  };

  /** The audit log (design §15), newest first; page with `before`/`beforeId` from `nextBefore`/`nextBeforeId`. */
  const audit = {
    list: (query: ListAuditQueryText = {}, signal?: AbortSignal) => request<AuditListJson>("GET", "/v1/audit", { query, signal }),
    /** Records what one `whc apply` run changed (config.applied). */
    configApplied: (body: ConfigAppliedRequest, signal?: AbortSignal) => request<void>("POST", "/v1/audit/config-applied", { body, signal }),
  };

  /** Alert channels (design §18): where the service tells the account what went wrong. */
  const alerts = {
    list: (signal?: AbortSignal) => request<AlertChannelListJson>("GET", "/v1/alert-channels", { signal }),
    /** A webhook channel's answer carries its `secret`, shown this once. */
    create: (body: CreateAlertChannelRequest) => request<CreatedAlertChannelJson>("POST", "/v1/alert-channels", { body }),
    delete: (id: string) => request<void>("DELETE", `/v1/alert-channels/${seg(id)}`),
    /** Queues a `test` alert to the channel; its `lastDelivery` then shows how it went. */
    test: (id: string) => request<AlertTestJson>("POST", `/v1/alert-channels/${seg(id)}/test`, { body: {} }),
  };

  /** Bulk redelivery (design §18): jobs that put the matching events' deliveries back in the outbox. */
  const redeliveries = redeliveryCalls(request);

  const follow = createFollow(events.list);

  return {
    request,
    endpoints,
    events,
    providers: { list: () => request<ProviderListJson>("GET", "/v1/providers") },
    listeners,
    schemas,
    keys,
    audit,
    alerts,
    redeliveries,
    follow,
  };
}

export type ApiClient = ReturnType<typeof createApiClient>;
