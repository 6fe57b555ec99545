import type { IncomingMessage, ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import type { Client } from "@connectrpc/connect";
import { EventSchema, SealedBodySchema, type Health } from "@whc/contracts";
import { AppError } from "@whc/errors";
import { requestContext, type Logger } from "@whc/logging";
import type { BlindIndexer, EnvelopeSealer } from "@whc/crypto-core";
import { eventSummaryJson } from "@whc/api-model";
import type { CaptureBus } from "@whc/messaging";
import { isUuid } from "@whc/catalog-core";
import { create } from "@bufbuild/protobuf";
import type { AppendBatcher } from "./batcher.js";
import type { EndpointCache } from "./endpoint-cache.js";
import { rawHeaderPairs, readBody, remoteIpOf } from "./request.js";
import { verifyCapture } from "./verify.js";
import { slackUrlVerificationChallenge } from "@whc/signatures";

export interface IngestDeps {
  endpoints: EndpointCache;
  batcher: AppendBatcher;
  sealer: EnvelopeSealer;
  blindIndex: () => Promise<BlindIndexer>;
  bus: CaptureBus;
  health: { catalog: Client<typeof Health>; crypto: Client<typeof Health> };
  logger: Logger;
}

export interface IngestOptions {
  maxStoredBodyBytes: number;
  maxInboundBodyBytes: number;
  trustedProxies: ReadonlySet<string>;
}

const HOOK_PATH = /^\/h\/([^/?#]+)(.*)$/s;
const RETRY_AFTER_OUTAGE_S = "5";

function reply(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/**
 * The receiving surface: any method, any sub-path and query after /h/{endpointId}. A 2xx
 * goes out only after the catalog has durably stored the capture.
 */
export function createIngestHandler(deps: IngestDeps, options: IngestOptions) {
  const { logger } = deps;

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

  async function capture(req: IncomingMessage, res: ServerResponse, endpointId: string, rest: string): Promise<void> {
    const found = await deps.endpoints.get(endpointId);
    if (!found) {
      req.resume();
      reply(res, 404, { ok: false, error: "not_found", message: "No endpoint receives at this URL." });
      return;
    }
    const { endpoint, secret } = found;
    if (endpoint.status === "paused") {
      req.resume();
      reply(res, 503, { ok: false, error: "endpoint_paused", message: "This endpoint is paused." }, { "retry-after": "60" });
      return;
    }
    const body = await readBody(req, options.maxStoredBodyBytes, options.maxInboundBodyBytes);
    const headers = rawHeaderPairs(req);
    const responseCode = body.overLimit ? 413 : 200;
    const verified = verifyCapture({
      provider: endpoint.provider,
      headers,
      body: body.kept,
      secret,
      genericSignatureHeader: endpoint.genericSignatureHeader,
      genericSignaturePrefix: endpoint.genericSignaturePrefix,
      nowMs: Date.now(),
    });
    const storeBody = endpoint.operatingMode !== "metadata_only" && !body.overLimit;
    const event = create(EventSchema, {
      accountId: endpoint.accountId,
      endpointId,
      method: req.method ?? "GET",
      path: rest,
      headers: headers.map(([name, value]) => ({ name, value })),
      remoteIp: remoteIpOf(req, options.trustedProxies),
      canonicalEventType: verified.canonicalEventType,
      provider: verified.provider,
      verification: verified.verification,
      verificationFailureReason: verified.failureReason,
      responseCode,
      truncated: storeBody && body.total > body.kept.length,
      originalSizeBytes: BigInt(body.total),
      bodyStored: storeBody,
    });
    if (storeBody) {
      event.body = create(SealedBodySchema, await deps.sealer.seal(endpointId, body.kept));
      event.searchTokens = (await deps.blindIndex())(body.kept);
    }
    const appended = await deps.batcher.append(event);
    event.id = appended.id;
    event.receivedAtMs = BigInt(appended.receivedAtMs);
    deps.bus.publishCapture({ accountId: endpoint.accountId, endpointId, summary: eventSummaryJson(event) });
    if (body.overLimit) {
      reply(res, 413, { ok: false, error: "payload_too_large", id: appended.id }, { connection: "close" });
      return;
    }
    // Slack confirms a new Request URL by expecting its challenge back; the event is kept too.
    const challenge = verified.provider === "slack" ? slackUrlVerificationChallenge(body.kept) : undefined;
    if (challenge !== undefined) {
      reply(res, 200, { challenge });
      return;
    }
    reply(res, 200, { ok: true, id: appended.id });
  }

  return async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = randomUUID();
    await requestContext.run({ requestId }, async () => {
      const url = req.url ?? "/";
      try {
        if (url === "/healthz" && (req.method === "GET" || req.method === "HEAD")) {
          await healthz(res);
          return;
        }
        const match = HOOK_PATH.exec(url);
        if (!match || !isUuid(match[1] as string)) {
          req.resume();
          reply(res, 404, { ok: false, error: "not_found", message: "No endpoint receives at this URL." });
          return;
        }
        await capture(req, res, (match[1] as string).toLowerCase(), match[2] ?? "");
      } catch (err) {
        const outage = AppError.is(err) && ["service_unavailable", "timeout"].includes(err.reason);
        // The path only: a query string may carry a sender's token.
        logger.error({ err: outage ? { reason: (err as AppError).reason } : err, path: url.split("?")[0] }, "capture failed");
        if (!res.headersSent) {
          reply(
            res,
            503,
            { ok: false, error: "service_unavailable", message: "The capture was not stored; retry later." },
            { "retry-after": RETRY_AFTER_OUTAGE_S },
          );
        }
      }
    });
  };
}
