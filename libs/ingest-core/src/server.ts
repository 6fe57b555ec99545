import type { IncomingMessage, ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import type { Client } from "@connectrpc/connect";
import type { CapturedEvent, CatalogService, Health } from "@whc/contracts";
import { AppError } from "@whc/errors";
import { requestContext, type Logger } from "@whc/logging";
import { packRequest, packSearchTokens, withSealedParts, type BlindIndexSource, type CaptureParts, type DedupeHasher, type EnvelopeSealer } from "@whc/sealing";
import { capturedSummaryJson } from "@whc/api-model/present";
import type { ReadinessJson } from "@whc/api-model";
import type { CaptureBus } from "@whc/ports";
import { isUuid } from "@whc/ids";
import { closeAfterAnswer, discardBody, NOT_FOUND, reply, type Lingering } from "./answer.js";
import { createInflightBudget, isReservation, type InflightBudget, type OverloadReason, type Reservation } from "./budget.js";
import { createBurstCollector, createReleaseCollector } from "./collect.js";
import type { Appended, AppendBatcher } from "./batcher.js";

type Stored = Exclude<Appended, { endpointMissing: true }>;
import { captureEvent, diagnosticJson, redactCapture, type Capture } from "./capture.js";
import { planReply, recordPlan, renderReply, sendAnswer, type ReplyPlan, type ReplyRequest } from "./reply-plan.js";
import type { EndpointCache, IngestEndpoint } from "./endpoint-cache.js";
import type { IngestMetrics } from "./metrics.js";
import type { InboundRefusal } from "./inbound.js";
import type { RejectionCounter } from "./rejections.js";
import { BodyIdle, BodyOverBudget, bodyReservation, knownBodyLength, readBodyThen, remoteIpOf, type ReadBody } from "./request.js";
import { withForward, type Forwarding } from "./forward.js";
import type { DedupeInput, Deduper } from "./dedupe.js";
import { callFailureReason, forwardFailed, PROXY_CALL_MARGIN_MS, proxyAnswerOf, sendProxyAnswer, type ProxyAnswer, type ReplayForwarder } from "./proxy.js";

export interface IngestDeps {
  endpoints: EndpointCache;
  batcher: AppendBatcher;
  sealer: EnvelopeSealer;
  blindIndex: BlindIndexSource;
  bus: CaptureBus;
  /** Forwards proxy endpoints' captures (design §11). */
  replay: ReplayForwarder;
  /** Stores what a proxied capture's sender was answered, once it was. */
  catalog: Pick<Client<typeof CatalogService>, "recordProxyAnswer">;
  health: { catalog: Client<typeof Health>; crypto: Client<typeof Health> };
  /** GET /readyz: every dependency of this process, by name (catalog, crypto, replay, nats). */
  readiness: { check(): Promise<ReadinessJson> };
  metrics: IngestMetrics;
  logger: Logger;
  /** Counts requests the endpoints' inbound protection refused (rejectedCount, design §16). */
  rejections: Pick<RejectionCounter, "count">;
}

export interface IngestOptions {
  maxStoredBodyBytes: number;
  maxInboundBodyBytes: number;
  trustedProxies: ReadonlySet<string>;
  /** After a rotation, how long the previous secret still verifies. */
  secretGraceMs: number;
  /** WHC_INGEST_PUBLIC_URL: the senders' view of this server, for URL-signed schemes. */
  publicUrl: string;
  /** WHC_INGEST_MAX_INFLIGHT_BYTES: the most request-body bytes held across requests in flight (design §13). */
  maxInflightBytes: number;
  /** WHC_INGEST_MAX_INFLIGHT_BYTES_PER_PEER: the most of it one remote address may hold (design §14). */
  maxInflightBytesPerPeer: number;
  /** WHC_INGEST_MAX_INFLIGHT_BYTES_PER_ENDPOINT: the most of it one endpoint's requests may hold (design §14). */
  maxInflightBytesPerEndpoint: number;
  /** WHC_INGEST_BODY_IDLE_MS: a body from which nothing arrives for this long is cut with 408 (design §14). */
  bodyIdleMs: number;
  /** WHC_MAX_HOPS: a capture arriving with this many forwards behind it is answered 508 and not forwarded (design §14). */
  maxHops: number;
  /**
   * WHC_SCHEMA_LEARNING: read each JSON body's shape for the catalog to learn (design §19, ADR
   * 0090); off, captures carry none and nothing is learned. Default on.
   */
  learnSchemas?: boolean | undefined;
}

/**
 * Largest header section ingest accepts (Node's default is 16 KiB). Senders that put signed
 * tokens or long trace baggage in headers pass 16 KiB now and then; a capture tool should
 * keep them. Larger sections are answered 431 by Node's parser, before any handler runs.
 */
export const INGEST_MAX_HEADER_BYTES = 64 * 1024;

const HOOK_PATH = /^\/h\/([^/?#]+)(.*)$/s;
const RETRY_AFTER_OUTAGE_S = "5";
const RETRY_AFTER_OVERLOADED_S = "1";
/**
 * After a burst of bodies, how long the budget stays empty before the dead bodies are
 * collected. What refused connections drop while they linger is counted by the release
 * collector as each closes.
 */
const BURST_QUIET_MS = 3000;

/**
 * What every step of a capture needs, built once per handler and passed first: the steps
 * are plain functions, so a request allocates no closures beyond the callbacks it waits on.
 */
interface Surface {
  deps: IngestDeps;
  options: IngestOptions;
  logger: Logger;
  metrics: IngestMetrics;
  budget: InflightBudget;
  /** How refused bodies are drained: what they drop is garbage, counted towards a collection. */
  lingering: Lingering;
}

/*
 * The capture path is written with callbacks and a synchronous fast path (endpoint cached,
 * data key and blind-index key at hand): under load most of a capture's event-loop time
 * had gone to promise bookkeeping between its steps rather than to the steps.
 */

/**
 * The receiving surface: any method, any sub-path and query after /h/{endpointId}. A 2xx
 * goes out only after the catalog has durably stored the capture.
 */
export function createIngestHandler(deps: IngestDeps, options: IngestOptions) {
  // Bodies given back and bodies dropped unread are both garbage that V8 is slow to collect.
  const garbage = createReleaseCollector(options.maxInflightBytes / 4);
  const budget = createInflightBudget(
    options.maxInflightBytes,
    { afterBurst: createBurstCollector(BURST_QUIET_MS), released: garbage },
    { perPeer: options.maxInflightBytesPerPeer, perEndpoint: options.maxInflightBytesPerEndpoint },
  );
  const lingering: Lingering = { dropped: garbage, idleMs: options.bodyIdleMs };
  const s: Surface = { deps, options, logger: deps.logger, metrics: deps.metrics, budget, lingering };
  deps.metrics.watchInflight(s.budget);

  /**
   * Handles one request. `expectsContinue`: the request carries `Expect: 100-continue` and the
   * server left the `100 Continue` to this handler (Node's `checkContinue` event).
   */
  return function handle(req: IncomingMessage, res: ServerResponse, expectsContinue = false): void {
    const url = req.url ?? "/";
    if (url === "/healthz" && (req.method === "GET" || req.method === "HEAD")) {
      void healthz(s, res);
      return;
    }
    if (url === "/readyz" && (req.method === "GET" || req.method === "HEAD")) {
      void readyz(s, res);
      return;
    }
    const match = HOOK_PATH.exec(url);
    if (!match || !isUuid(match[1] as string)) {
      s.metrics.answered("unknown_endpoint");
      reply(res, 404, NOT_FOUND, discardBody(req, s.lingering));
      return;
    }
    lookUpEndpoint(s, {
      req,
      res,
      url,
      endpointId: (match[1] as string).toLowerCase(),
      rest: match[2] ?? "",
      startedMs: performance.now(),
      expectsContinue,
      remoteIp: remoteIpOf(req, options.trustedProxies),
    });
  };
}

async function healthz(s: Surface, res: ServerResponse): Promise<void> {
  const probe = async (c: Client<typeof Health>) => {
    try {
      return (await c.check({ service: "" }, { timeoutMs: 2000 })).status === 1;
    } catch {
      return false;
    }
  };
  const { deps } = s;
  const [catalog, crypto] = await Promise.all([probe(deps.health.catalog), probe(deps.health.crypto)]);
  const ok = catalog && (crypto || deps.sealer.ready());
  reply(res, ok ? 200 : 503, {
    status: ok ? "ok" : "unavailable",
    checks: { catalog: catalog ? "ok" : "down", crypto: crypto ? "ok" : "down", bus: deps.bus.connected() ? "ok" : "down" },
  });
}

/** 200 when every dependency answers, else 503 naming those down in `failing`. */
async function readyz(s: Surface, res: ServerResponse): Promise<void> {
  const report = await s.deps.readiness.check();
  reply(res, report.status === "ok" ? 200 : 503, report);
}

/** What a log line may show of a capture's URL: the path only, as a query may carry a sender's token. */
function pathOnly(url: string): string {
  return url.split("?")[0] as string;
}

/** Anything that stops a capture before its 2xx: logged, and the sender told to retry. */
function failed(s: Surface, c: Capture, err: unknown): void {
  const outage = AppError.is(err) && ["service_unavailable", "timeout"].includes(err.reason);
  s.logger.error({ err: outage ? { reason: (err as AppError).reason } : err, path: pathOnly(c.url) }, "capture failed");
  s.metrics.answered("unavailable");
  if (!c.res.headersSent) {
    reply(
      c.res,
      503,
      { ok: false, error: "service_unavailable", message: "The capture was not stored; retry later." },
      { "retry-after": RETRY_AFTER_OUTAGE_S },
    );
  }
}

function lookUpEndpoint(s: Surface, c: Capture): void {
  try {
    const cached = s.deps.endpoints.peek(c.endpointId);
    if (cached) return admit(s, c, cached.found);
    requestContext
      .run({ requestId: randomUUID() }, () => s.deps.endpoints.get(c.endpointId))
      .then((found) => admit(s, c, found))
      .catch((err: unknown) => failed(s, c, err));
  } catch (err) {
    failed(s, c, err);
  }
}

/** Unknown and paused endpoints are refused here, before their body is read. */
function admit(s: Surface, c: Capture, found: IngestEndpoint | undefined): void {
  if (!found) {
    s.metrics.answered("unknown_endpoint");
    reply(c.res, 404, NOT_FOUND, discardBody(c.req, s.lingering));
    return;
  }
  if (found.endpoint.status === "paused") {
    s.metrics.answered("paused");
    reply(
      c.res,
      503,
      { ok: false, error: "endpoint_paused", message: "This endpoint is paused." },
      { "retry-after": "60", ...discardBody(c.req, s.lingering) },
    );
    return;
  }
  // Nothing configured costs this one check (design §20).
  if (found.inbound) {
    const refused = found.inbound.check(c.req, c.remoteIp);
    if (refused) return rejected(s, c, refused);
  }
  if (c.res.destroyed) {
    // Gone while its endpoint was looked up: nothing to reserve for, and nobody to answer.
    s.metrics.answered("sender_gone");
    return;
  }
  const declared = knownBodyLength(c.req);
  // Declared over the inbound limit: answered 413 at once (its metadata stored), nothing of
  // the body read or reserved, and no 100 Continue invites it.
  if (declared !== undefined && declared > s.options.maxInboundBodyBytes) return captureBody(s, c, found, DECLARED_TOO_LARGE);
  const reservation = s.budget.reserve(bodyReservation(c.req, s.options.maxInboundBodyBytes), { peer: c.remoteIp, endpoint: c.endpointId });
  if (!isReservation(reservation)) return overloaded(s, c, reservation);
  // Every way the request ends (answered, sender gone, failure) closes the response, once;
  // release is idempotent, so a plain listener does (once() wraps it, per capture).
  c.res.on("close", reservation.release);
  c.reservation = reservation;
  // A sender that asked first gets its go-ahead only now: an unknown, paused, too large or
  // overloaded request has answered above, before a byte of the body was sent.
  if (c.expectsContinue) c.res.writeContinue();
  readBody(s, c, found, reservation);
}

/** Refused by the endpoint's inbound protection (design §16): 401, 403 or 405 before the body is read; nothing stored, counted. */
function rejected(s: Surface, c: Capture, refused: InboundRefusal): void {
  s.metrics.answered(refused.outcome);
  s.deps.rejections.count(c.endpointId);
  reply(c.res, refused.status, { ok: false, error: refused.error, message: refused.message }, { ...refused.headers, ...discardBody(c.req, s.lingering) });
}

/** A body declared past the inbound limit, never read: its capture keeps the declared size only. */
const DECLARED_TOO_LARGE: ReadBody = { whole: Buffer.alloc(0), kept: Buffer.alloc(0), total: 0, overLimit: true };

/**
 * 503 overloaded (design §13, §14): the body would pass the in-flight budget, or the share of
 * it its remote address or its endpoint may hold; nothing is stored. The body is drained so
 * the sender reads this answer.
 */
function overloaded(s: Surface, c: Capture, reason: OverloadReason): void {
  s.metrics.overloaded(reason);
  reply(
    c.res,
    503,
    { ok: false, error: "overloaded", message: "Ingest holds as many request bodies as it may; retry shortly." },
    { "retry-after": RETRY_AFTER_OVERLOADED_S, ...discardBody(c.req, s.lingering) },
  );
}

/** 408 (design §14): the body stopped arriving; its reservation is back, nothing is stored, the connection closes. */
function bodyIdle(s: Surface, c: Capture, err: BodyIdle): void {
  c.reservation?.release();
  s.metrics.answered("body_timeout");
  s.logger.info({ path: pathOnly(c.url), idleMs: err.idleMs }, "request body stalled; answered 408, nothing stored");
  reply(
    c.res,
    408,
    { ok: false, error: "request_timeout", message: "The request body stopped arriving; nothing was stored." },
    { connection: "close" },
  );
}

/**
 * The body bytes a capture stores. A forwarded body is stored whole (up to the inbound limit):
 * the forward sends the stored bytes, and a cut body would reach the destination as if it were
 * the sender's.
 */
function storedBytes(s: Surface, found: IngestEndpoint): number {
  return found.forwarding ? s.options.maxInboundBodyBytes : s.options.maxStoredBodyBytes;
}

function readBody(s: Surface, c: Capture, found: IngestEndpoint, reservation: Reservation): void {
  const limits = { keep: storedBytes(s, found), limit: s.options.maxInboundBodyBytes, idleMs: s.options.bodyIdleMs };
  readBodyThen(c.req, limits, reservation, (err, body) => {
    if (err instanceof BodyOverBudget) return overloaded(s, c, err.reason);
    if (err instanceof BodyIdle) return bodyIdle(s, c, err);
    if (err && !c.req.complete) {
      // The sender hung up mid-body: it got no answer, so it will retry; nothing is kept.
      s.logger.info({ path: pathOnly(c.url) }, "sender closed the connection before its body ended; nothing stored");
      s.metrics.answered("sender_gone");
      return;
    }
    if (err) return failed(s, c, err);
    try {
      captureBody(s, c, found, body as ReadBody);
    } catch (e) {
      failed(s, c, e);
    }
  });
}

/**
 * What the answer needs after the commit: the endpoint as looked up, and either the plan and
 * the request (design §10; relay endpoints too) or, for a proxy endpoint, its forwarding.
 */
type Pending =
  | { found: IngestEndpoint; reply: ReplyPlan; request: ReplyRequest; proxy?: undefined; loop?: undefined }
  | { found: IngestEndpoint; proxy: Forwarding; loop?: undefined }
  | { found: IngestEndpoint; loop: true; proxy?: undefined };

/** The hop count a request arrived with (`X-Whc-Hop`, set by every forward: design §14); 0 without one. */
function arrivedHop(c: Capture): number {
  const value = c.req.headers["x-whc-hop"];
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  return text !== undefined && /^\d{1,6}$/.test(text) ? Number(text) : 0;
}

function captureBody(s: Surface, c: Capture, found: IngestEndpoint, body: ReadBody): void {
  const { capture, keepsBody, request: captured, diagnosis } = captureEvent(c, found, body, s.options);
  let storedRequest = captured;
  let storedBody = keepsBody ? body.kept : undefined;
  // Without redaction this one check is all it costs (design §20): nothing is allocated.
  if (found.redactor) ({ request: storedRequest, body: storedBody } = redactCapture(found.redactor, capture, diagnosis, captured, keepsBody ? body.whole : undefined, storedBytes(s, found)));
  let pending: Pending | undefined;
  let targets: string[] | undefined;
  let dedupe: DedupeMaterial | undefined;
  if (body.overLimit) {
    // Refused as too large: only metadata is stored (never forwarded), and ingest's own 413 is the answer.
    capture.diagnosticJson = diagnosticJson(diagnosis, "default");
  } else if (arrivedHop(c) >= s.options.maxHops) {
    // Forwarded this many times already: a loop through endpoints (here or elsewhere). Stored
    // as it came, never forwarded, answered 508 forward_loop, so the loop ends here.
    capture.responseCode = 508;
    capture.diagnosticJson = diagnosticJson(diagnosis, "default");
    pending = { found, loop: true };
  } else if (found.forwarding?.mode === "proxy") {
    // The destination answers, not the endpoint's response configuration; what it answered
    // is the forward's attempt, recorded by replay after this commit.
    targets = withForward(capture, found.forwarding, { method: capture.method, rest: c.rest, headers: storedRequest.headers, body: storedBody });
    capture.responseCode = 0;
    capture.diagnosticJson = diagnosticJson(diagnosis, "proxy");
    pending = { found, proxy: found.forwarding };
  } else {
    // Without forwarding (a capture endpoint) this check is all routing costs (design §20).
    if (found.forwarding) targets = withForward(capture, found.forwarding, { method: capture.method, rest: c.rest, headers: storedRequest.headers, body: storedBody });
    const request: ReplyRequest = { method: capture.method, path: c.rest, headers: captured.headers, body: body.whole, eventType: capture.canonicalEventType };
    const reply = planReply(found, request);
    recordPlan(capture, found, reply, diagnosis);
    pending = { found, reply, request };
    // Without dedupe this check is all deduplication costs (design §20).
    if (found.deduper) dedupe = dedupeMaterial(found.deduper, capture, captured.headers, body.whole, c.rest);
  }
  const parts: CaptureParts = { request: packRequest(storedRequest), body: storedBody, forwardTargets: targets };
  sealThenCommit(s, c, capture, parts, pending, dedupe);
}

/** A capture's deduplication key before it is hashed (ADR 0083), and the window it holds for. */
interface DedupeMaterial {
  material: string;
  windowMs: bigint;
}

/**
 * The capture's key (design §17) from the request as it arrived, before redaction: a redacted
 * value still tells retries apart, and only its keyed hash is stored. A capture whose signature
 * failed takes no part: a forged request carrying a real event's id must not make the real one
 * a duplicate. Undefined: no key (the provider sends no id, none of the fields is there).
 */
function dedupeMaterial(deduper: Deduper, capture: CapturedEvent, headers: DedupeInput["headers"], body: Uint8Array, rest: string): DedupeMaterial | undefined {
  if (capture.verification === "failed") return undefined;
  const material = deduper.materialOf({ provider: capture.provider, headers, body, rest });
  return material === undefined ? undefined : { material, windowMs: deduper.windowMs };
}

function withDedupeKey(capture: CapturedEvent, hasher: DedupeHasher, dedupe: DedupeMaterial): void {
  capture.dedupeKey = hasher(capture.endpointId, dedupe.material);
  capture.dedupeWindowMs = dedupe.windowMs;
}

/**
 * Seals the request (always: headers are metadata too), the body when one is stored and the
 * forward target (it may carry the sub-path and query) under one data key, and indexes the
 * body's words; then commits.
 */
function sealThenCommit(s: Surface, c: Capture, capture: CapturedEvent, parts: CaptureParts, pending: Pending | undefined, dedupe?: DedupeMaterial): void {
  const { sealer, blindIndex } = s.deps;
  const kept = parts.body;
  const sealed = sealer.sealCaptureNow(c.endpointId, parts);
  const indexer = kept === undefined ? noIndex : blindIndex.current();
  // The dedupe key is hashed with a key derived from the blind-index key (ADR 0083).
  const hasher = dedupe === undefined ? noHash : blindIndex.dedupeHasher();
  if (sealed && indexer && hasher) {
    withSealedParts(capture, sealed, kept === undefined ? NO_TOKENS : packSearchTokens(indexer(kept)));
    if (dedupe) withDedupeKey(capture, hasher, dedupe);
    return commit(s, c, capture, pending);
  }
  // A data key or the blind-index key is still to be fetched from the crypto service.
  const keyed = indexer && hasher ? undefined : blindIndex();
  Promise.all([sealed ?? sealer.sealCapture(c.endpointId, parts), indexer ?? keyed, keyed]).then(
    ([done, index]) => {
      withSealedParts(capture, done, kept === undefined ? NO_TOKENS : packSearchTokens((index as NonNullable<typeof indexer>)(kept)));
      if (dedupe) withDedupeKey(capture, (hasher ?? blindIndex.dedupeHasher()) as DedupeHasher, dedupe);
      commit(s, c, capture, pending);
    },
    (err: unknown) => failed(s, c, err),
  );
}

/** A metadata-only capture has no words to index: it waits for no blind-index key. */
const noIndex = (): Uint8Array[] => [];
const noHash: DedupeHasher = () => NO_TOKENS;
const NO_TOKENS = new Uint8Array(0);

/**
 * The sender is answered from the batch's callback, once the catalog has made it durable.
 * Without `pending` the body was over the inbound limit: only its metadata is stored, and 413.
 */
function commit(s: Surface, c: Capture, capture: CapturedEvent, pending: Pending | undefined): void {
  const overLimit = pending === undefined;
  s.deps.batcher.appendThen(capture, (err, appended) => {
    if (err || !appended) return failed(s, c, err);
    if (appended.endpointMissing) {
      // Deleted after this capture found it (a cached lookup, or a delete racing the
      // commit): nothing was stored, so the sender is told what it will be told from now on.
      s.deps.endpoints.invalidate(c.endpointId);
      s.metrics.answered("unknown_endpoint");
      reply(c.res, 404, NOT_FOUND, overLimit ? closeAfterAnswer(c.req, s.lingering) : {});
      return;
    }
    // A sequence's status is the one the catalog stored for the capture's place in it.
    capture.responseCode = appended.responseCode || capture.responseCode;
    notify(s, capture, appended);
    answerStored(s, c, capture, appended, pending);
  });
}

function notify(s: Surface, capture: CapturedEvent, stored: Stored): void {
  try {
    // Within one process nobody may be tailing this endpoint: then no summary is made for no one.
    if (s.deps.bus.listensToCaptures?.(capture.accountId, capture.endpointId) === false) return;
    s.deps.bus.publishCapture({ accountId: capture.accountId, endpointId: capture.endpointId, summary: capturedSummaryJson(capture, stored) });
  } catch (e) {
    // Stored: the sender gets its 2xx whatever happens to the notification.
    s.logger.warn({ err: e }, "capture notification failed");
  }
}

function answerStored(s: Surface, c: Capture, event: CapturedEvent, stored: Stored, pending: Pending | undefined): void {
  if (!pending) {
    s.metrics.answered("too_large");
    reply(c.res, 413, { ok: false, error: "payload_too_large", id: stored.id }, closeAfterAnswer(c.req, s.lingering));
    return;
  }
  if (pending.proxy) return proxy(s, c, event, stored, pending.proxy);
  if (pending.loop) {
    s.metrics.answered("forward_loop");
    reply(c.res, 508, { ok: false, error: "forward_loop", message: "This request has been forwarded too many times; it is stored and not forwarded again.", id: stored.id });
    return;
  }
  s.metrics.stored(event.provider, event.verification, (performance.now() - c.startedMs) / 1000);
  if (stored.duplicateOf) s.metrics.duplicate();
  const answer = renderReply(pending.found, pending.reply, stored, pending.request);
  const send = () => {
    if (!sendAnswer(c.res, answer, stored.id)) s.logger.warn({ path: pathOnly(c.url) }, "a configured answer could not be sent; answered 200 instead");
  };
  // The delay counts from the durable commit (design §10): the capture is stored either way.
  if (answer.delayMs > 0) setTimeout(send, answer.delayMs);
  else send();
  // A duplicate's deliveries never enter the outbox (design §17).
  if (event.forwardScheduled && !stored.duplicateOf) wakeOutbox(s);
}

/** relay: the delivery is in the outbox since the commit; the workers are told to look now. */
function wakeOutbox(s: Surface): void {
  try {
    s.deps.bus.publishOutboxWake();
  } catch (err) {
    // Best effort: the workers poll the outbox anyway.
    s.logger.warn({ err }, "outbox wake not published");
  }
}

/**
 * proxy: the stored capture is forwarded now, through the replay service (guard, lease,
 * attempt record), and the sender gets what the destination answered, or 502/504
 * forward_failed. The capture is stored whatever happens here.
 */
function proxy(s: Surface, c: Capture, event: CapturedEvent, stored: Stored, forwarding: Forwarding): void {
  // The body is stored and no longer held here: the wait for the destination holds no budget.
  c.reservation?.release();
  const request = {
    accountId: event.accountId,
    endpointId: event.endpointId,
    eventId: stored.id,
    trigger: "initial",
    maxResponseBytes: s.options.maxInboundBodyBytes,
  };
  s.deps.replay.forwardEvent(request, { timeoutMs: (forwarding.destinations[0]?.settings.timeoutMs ?? 0) + PROXY_CALL_MARGIN_MS }).then(
    (res) => answerProxied(s, c, event, stored.id, proxyAnswerOf(res.attempt, stored.id)),
    (err: unknown) => {
      const reason = callFailureReason(err);
      s.logger.warn({ err: AppError.is(err) ? { reason: err.reason } : err, path: pathOnly(c.url) }, "proxy forward failed");
      answerProxied(s, c, event, stored.id, forwardFailed(reason));
    },
  );
}

/**
 * Answers the sender, then stores that answer as the event's responseCode (design §10: the
 * status actually sent) and, for a failure, forward_failed as its responseSource. The sender
 * does not wait for that write; if it fails, the event keeps responseCode 0 and the log says so.
 */
function answerProxied(s: Surface, c: Capture, event: CapturedEvent, eventId: string, answer: ProxyAnswer): void {
  const sent = sendProxyAnswer(c.res, answer, eventId);
  s.metrics.proxied(event.provider, event.verification, sent.failure === undefined ? "proxied" : "forward_failed");
  const ref = { accountId: event.accountId, endpointId: event.endpointId, eventId };
  s.deps.catalog.recordProxyAnswer({ ...ref, responseCode: sent.status, forwardFailed: sent.failure !== undefined }).catch((err: unknown) => {
    s.logger.warn({ err: AppError.is(err) ? { reason: err.reason } : err, eventId }, "proxy answer not recorded on the event");
  });
}
