import type { IncomingMessage, ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import type { Client } from "@connectrpc/connect";
import type { Event, Health } from "@whc/contracts";
import { AppError } from "@whc/errors";
import { requestContext, type Logger } from "@whc/logging";
import type { BlindIndexSource, EnvelopeSealer, SealedBodyParts } from "@whc/crypto-core";
import { eventSummaryJson } from "@whc/api-model";
import type { CaptureBus } from "@whc/messaging";
import { isUuid } from "@whc/ids";
import { slackUrlVerificationChallenge } from "@whc/signatures";
import type { AppendBatcher } from "./batcher.js";
import type { EndpointCache, IngestEndpoint } from "./endpoint-cache.js";
import type { IngestMetrics } from "./metrics.js";
import { declaredLength, originalSize, rawHeaderPairs, readBodyThen, remoteIpOf, type ReadBody } from "./request.js";
import { verifyCapture } from "./verify.js";

export interface IngestDeps {
  endpoints: EndpointCache;
  batcher: AppendBatcher;
  sealer: EnvelopeSealer;
  blindIndex: BlindIndexSource;
  bus: CaptureBus;
  health: { catalog: Client<typeof Health>; crypto: Client<typeof Health> };
  metrics: IngestMetrics;
  logger: Logger;
}

export interface IngestOptions {
  maxStoredBodyBytes: number;
  maxInboundBodyBytes: number;
  trustedProxies: ReadonlySet<string>;
}

/**
 * Largest header section ingest accepts (Node's default is 16 KiB). Senders that put signed
 * tokens or long trace baggage in headers pass 16 KiB now and then; a capture tool should
 * keep them. Larger sections are answered 431 by Node's parser, before any handler runs.
 */
export const INGEST_MAX_HEADER_BYTES = 64 * 1024;

const HOOK_PATH = /^\/h\/([^/?#]+)(.*)$/s;
const RETRY_AFTER_OUTAGE_S = "5";
const NOT_FOUND = { ok: false, error: "not_found", message: "No endpoint receives at this URL." };

/** What a log line may show of a capture's URL: the path only, as a query may carry a sender's token. */
function pathOnly(url: string): string {
  return url.split("?")[0] as string;
}

function reply(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** Bodies larger than this are not read just to be thrown away (answers that store nothing). */
const DRAIN_LIMIT_BYTES = 64 * 1024;

/**
 * For an answer that stores nothing (404, paused): headers that let the rest of the body be
 * skipped. A small body is read and dropped so the connection can serve the sender's next
 * request; a large or unsized one is not read at all, and the connection closes after the
 * answer instead.
 */
function discardBody(req: IncomingMessage): Record<string, string> {
  // Without Content-Length or Transfer-Encoding a request has no body at all.
  const length = declaredLength(req) ?? (req.headers["transfer-encoding"] === undefined ? 0 : undefined);
  if (req.complete || (length !== undefined && length <= DRAIN_LIMIT_BYTES)) {
    req.resume();
    return {};
  }
  return { connection: "close" };
}

/** One capture in progress. */
interface Capture {
  req: IncomingMessage;
  res: ServerResponse;
  url: string;
  endpointId: string;
  rest: string;
  /** performance.now() at arrival. */
  startedMs: number;
  /** The sender waits for `100 Continue` before sending its body. */
  expectsContinue: boolean;
}

/**
 * The receiving surface: any method, any sub-path and query after /h/{endpointId}. A 2xx
 * goes out only after the catalog has durably stored the capture.
 */
export function createIngestHandler(deps: IngestDeps, options: IngestOptions) {
  const { logger, metrics } = deps;

  async function healthz(res: ServerResponse): Promise<void> {
    const probe = async (c: Client<typeof Health>) => {
      try {
        return (await c.check({ service: "" }, { timeoutMs: 2000 })).status === 1;
      } catch {
        return false;
      }
    };
    const [catalog, crypto] = await Promise.all([probe(deps.health.catalog), probe(deps.health.crypto)]);
    const ok = catalog && (crypto || deps.sealer.ready());
    reply(res, ok ? 200 : 503, {
      status: ok ? "ok" : "unavailable",
      checks: { catalog: catalog ? "ok" : "down", crypto: crypto ? "ok" : "down", bus: deps.bus.connected() ? "ok" : "down" },
    });
  }

  function serveMetrics(res: ServerResponse): void {
    metrics.registry.metrics().then(
      (text) => {
        res.writeHead(200, { "content-type": metrics.registry.contentType, "content-length": Buffer.byteLength(text) });
        res.end(text);
      },
      (err: unknown) => {
        logger.error({ err }, "metrics collection failed");
        reply(res, 503, { ok: false, error: "service_unavailable", message: "Metrics could not be collected." });
      },
    );
  }

  /** Anything that stops a capture before its 2xx: logged, and the sender told to retry. */
  function failed(c: Capture, err: unknown): void {
    const outage = AppError.is(err) && ["service_unavailable", "timeout"].includes(err.reason);
    logger.error({ err: outage ? { reason: (err as AppError).reason } : err, path: pathOnly(c.url) }, "capture failed");
    metrics.answered("unavailable");
    if (!c.res.headersSent) {
      reply(
        c.res,
        503,
        { ok: false, error: "service_unavailable", message: "The capture was not stored; retry later." },
        { "retry-after": RETRY_AFTER_OUTAGE_S },
      );
    }
  }

  /*
   * The capture path is written with callbacks and a synchronous fast path (endpoint cached,
   * data key and blind-index key at hand): under load most of a capture's event-loop time
   * had gone to promise bookkeeping between its steps rather than to the steps.
   */

  function withEndpoint(c: Capture, found: IngestEndpoint | undefined): void {
    if (!found) {
      metrics.answered("unknown_endpoint");
      reply(c.res, 404, NOT_FOUND, discardBody(c.req));
      return;
    }
    if (found.endpoint.status === "paused") {
      metrics.answered("paused");
      reply(
        c.res,
        503,
        { ok: false, error: "endpoint_paused", message: "This endpoint is paused." },
        { "retry-after": "60", ...discardBody(c.req) },
      );
      return;
    }
    // A sender that asked first gets its go-ahead only now: an unknown or paused endpoint
    // has answered above, before a byte of the body was sent.
    if (c.expectsContinue) c.res.writeContinue();
    readBodyThen(c.req, options.maxStoredBodyBytes, options.maxInboundBodyBytes, (err, body) => {
      if (err && !c.req.complete) {
        // The sender hung up mid-body: it got no answer, so it will retry; nothing is kept.
        logger.info({ path: pathOnly(c.url) }, "sender closed the connection before its body ended; nothing stored");
        metrics.answered("sender_gone");
        return;
      }
      if (err) return failed(c, err);
      try {
        withBody(c, found, body as ReadBody);
      } catch (e) {
        failed(c, e);
      }
    });
  }

  function withBody(c: Capture, { endpoint, secret }: IngestEndpoint, body: ReadBody): void {
    const { req } = c;
    const headers = rawHeaderPairs(req);
    const verified = verifyCapture({
      provider: endpoint.provider,
      headers,
      body: body.whole,
      complete: !body.overLimit,
      secret,
      genericSignatureHeader: endpoint.genericSignatureHeader,
      genericSignaturePrefix: endpoint.genericSignaturePrefix,
      nowMs: Date.now(),
    });
    const storeBody = endpoint.operatingMode !== "metadata_only" && !body.overLimit;
    const event: Event = {
      $typeName: "webhookcapture.catalog.v1.Event",
      id: "",
      accountId: endpoint.accountId,
      endpointId: c.endpointId,
      receivedAtMs: 0n,
      method: req.method ?? "GET",
      path: c.rest,
      headers: headers.map(([name, value]) => ({ $typeName: "webhookcapture.common.v1.Header", name, value })),
      remoteIp: remoteIpOf(req, options.trustedProxies),
      canonicalEventType: verified.canonicalEventType,
      provider: verified.provider,
      verification: verified.verification,
      verificationFailureReason: verified.failureReason,
      responseCode: body.overLimit ? 413 : 200,
      truncated: storeBody && body.total > body.kept.length,
      originalSizeBytes: BigInt(originalSize(req, body)),
      bodyStored: storeBody,
      searchTokens: [],
      diagnosticJson: "",
      forwardedResponseJson: "",
    };
    const challenge = verified.provider === "slack" && !body.overLimit ? slackUrlVerificationChallenge(body.whole) : undefined;
    if (!storeBody) return store(c, event, body.overLimit, challenge);
    const sealed = deps.sealer.sealNow(c.endpointId, body.kept);
    const indexer = deps.blindIndex.current();
    if (sealed && indexer) {
      withSealedBody(event, sealed, indexer(body.kept));
      return store(c, event, false, challenge);
    }
    // A data key or the blind-index key is still to be fetched from the crypto service.
    Promise.all([sealed ?? deps.sealer.seal(c.endpointId, body.kept), indexer ?? deps.blindIndex()]).then(
      ([parts, index]) => {
        withSealedBody(event, parts, index(body.kept));
        store(c, event, false, challenge);
      },
      (err: unknown) => failed(c, err),
    );
  }

  function store(c: Capture, event: Event, overLimit: boolean, challenge: string | undefined): void {
    deps.batcher.appendThen(event, (err, appended) => {
      if (err || !appended) return failed(c, err);
      if (appended.endpointMissing) {
        // Deleted after this capture found it (a cached lookup, or a delete racing the
        // commit): nothing was stored, so the sender is told what it will be told from now on.
        deps.endpoints.invalidate(c.endpointId);
        metrics.answered("unknown_endpoint");
        reply(c.res, 404, NOT_FOUND, overLimit ? { connection: "close" } : {});
        return;
      }
      try {
        event.id = appended.id;
        event.receivedAtMs = BigInt(appended.receivedAtMs);
        deps.bus.publishCapture({ accountId: event.accountId, endpointId: event.endpointId, summary: eventSummaryJson(event) });
      } catch (e) {
        // Stored: the sender gets its 2xx whatever happens to the notification.
        logger.warn({ err: e }, "capture notification failed");
      }
      if (overLimit) {
        metrics.answered("too_large");
        reply(c.res, 413, { ok: false, error: "payload_too_large", id: appended.id }, { connection: "close" });
        return;
      }
      metrics.stored(event.provider, event.verification, (performance.now() - c.startedMs) / 1000);
      if (challenge !== undefined) {
        // Slack confirms a new Request URL by expecting its challenge back; the event is kept too.
        reply(c.res, 200, { challenge });
      } else {
        reply(c.res, 200, { ok: true, id: appended.id });
      }
    });
  }

  /**
   * Handles one request. `expectsContinue`: the request carries `Expect: 100-continue` and the
   * server left the `100 Continue` to this handler (Node's `checkContinue` event).
   */
  return function handle(req: IncomingMessage, res: ServerResponse, expectsContinue = false): void {
    const url = req.url ?? "/";
    if (url === "/healthz" && (req.method === "GET" || req.method === "HEAD")) {
      void healthz(res);
      return;
    }
    if (url === "/metrics" && req.method === "GET") {
      serveMetrics(res);
      return;
    }
    const match = HOOK_PATH.exec(url);
    if (!match || !isUuid(match[1] as string)) {
      metrics.answered("unknown_endpoint");
      reply(res, 404, NOT_FOUND, discardBody(req));
      return;
    }
    const c: Capture = {
      req,
      res,
      url,
      endpointId: (match[1] as string).toLowerCase(),
      rest: match[2] ?? "",
      startedMs: performance.now(),
      expectsContinue,
    };
    try {
      const cached = deps.endpoints.peek(c.endpointId);
      if (cached) return withEndpoint(c, cached.found);
      requestContext
        .run({ requestId: randomUUID() }, () => deps.endpoints.get(c.endpointId))
        .then((found) => withEndpoint(c, found))
        .catch((err: unknown) => failed(c, err));
    } catch (err) {
      failed(c, err);
    }
  };
}

function withSealedBody(event: Event, parts: SealedBodyParts, searchTokens: Uint8Array[]): void {
  event.body = { $typeName: "webhookcapture.catalog.v1.SealedBody", ...parts };
  event.searchTokens = searchTokens;
}
