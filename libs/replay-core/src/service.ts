import type { Client, ServiceImpl } from "@connectrpc/connect";
import type { CatalogService, Endpoint, Event, ReplayService } from "@whc/contracts";
import { AppError, validationFailed } from "@whc/errors";
import type { Logger } from "@whc/logging";
import type { EnvelopeOpener } from "@whc/sealing";
import type { EgressLeases } from "@whc/ports";
import { currentRequestId } from "@whc/logging";
import { HOP_BY_HOP, sendOnce, vetTarget, type SendResult, type VetOptions } from "@whc/egress-guard";
import { PROVIDERS, signHeaders, signatureHeaderNames, type Provider } from "@whc/signatures";
import { secondsToUtcMidnight, utcDay } from "./allowance.js";

export interface ReplayServiceDeps {
  catalog: Client<typeof CatalogService>;
  opener: EnvelopeOpener;
  leases: EgressLeases;
  logger: Logger;
  /** Injected so tests can resolve names without DNS; production uses the system resolver. */
  resolver?: VetOptions["resolver"];
  now?: () => number;
}

export interface ReplayServiceOptions {
  dailyLimit: number;
  allowPrivateTargets: boolean;
  connectTimeoutMs: number;
  totalTimeoutMs: number;
  maxExcerptBytes: number;
}

/**
 * Beyond the hop-by-hop headers sendOnce drops itself: the ones that described the original
 * hop (proxies, forwarding) rather than the request.
 */
const NOT_REPLAYED = new Set([
  ...HOP_BY_HOP,
  "proxy-authorization",
  "expect",
  "x-forwarded-for",
  "x-forwarded-host",
  "x-forwarded-proto",
  "x-real-ip",
  "forwarded",
]);

function asProvider(value: string): Provider {
  return (PROVIDERS as readonly string[]).includes(value) ? (value as Provider) : "generic";
}

/**
 * Operation 9, in the order DESIGN.md fixes: the endpoint's replay flag; the target (scheme,
 * then every address its host resolves to); an egress lease (none: nothing sent, nothing
 * recorded, allowance untouched); one unit of the daily allowance (spent: lease released);
 * the request to the vetted address; the audit record; the lease released.
 */
export function createReplayService(deps: ReplayServiceDeps, options: ReplayServiceOptions): ServiceImpl<typeof ReplayService> {
  const now = deps.now ?? Date.now;
  const { catalog, logger } = deps;

  async function source(accountId: string, endpointId: string, eventId: string): Promise<{ endpoint: Endpoint; event: Event }> {
    const { endpoint } = await catalog.getEndpoint({ accountId, endpointId });
    const { event } = await catalog.getEvent({ accountId, endpointId, eventId, markRead: false });
    return { endpoint: endpoint!, event: event! };
  }

  return {
    async replayEvent(req) {
      if (!req.accountId) throw validationFailed("account_id", "required");
      const client = req.client === "dashboard" ? "dashboard" : "api";
      const mode = req.mode || (req.targetSecret ? "resign" : "exact");
      if (mode !== "exact" && mode !== "resign") throw validationFailed("mode", "format");
      if (mode === "resign" && !req.targetSecret) throw validationFailed("target_secret", "required");

      const { endpoint, event } = await source(req.accountId, req.endpointId, req.eventId);
      const allowed = client === "dashboard" ? endpoint.replayFromDashboard : endpoint.replayFromApi;
      if (!allowed) throw new AppError("replay_disabled", `replay from ${client} disabled`);

      const vetted = await vetTarget(req.targetUrl, {
        allowPrivate: options.allowPrivateTargets,
        ...(deps.resolver ? { resolver: deps.resolver } : {}),
      });
      if (!vetted.ok) {
        throw new AppError("target_not_allowed", `target refused: ${vetted.reason}`, {
          meta: { refusal: vetted.reason, ...(vetted.category ? { category: vetted.category } : {}) },
        });
      }

      // The body is opened before anything is taken, so a crypto outage charges nothing.
      let body: Uint8Array | undefined;
      let sourceBodyTruncated = event.truncated;
      if (event.bodyStored && event.body) {
        const opened = await deps.opener.open(event.endpointId, event.body);
        if (opened.ok) body = opened.plaintext;
        else sourceBodyTruncated = true;
      } else {
        sourceBodyTruncated = true;
      }

      const lease = await deps.leases.acquire(vetted.target.url.origin);
      if (!lease) throw new AppError("egress_capacity_exhausted", "no egress lease");
      try {
        const startedAt = now();
        const charge = await catalog.chargeReplay({ accountId: req.accountId, day: utcDay(startedAt), limit: options.dailyLimit });
        if (!charge.allowed) {
          throw new AppError("replay_limit_exceeded", "daily replay allowance spent", {
            meta: { limit: options.dailyLimit, reset: secondsToUtcMidnight(startedAt) },
          });
        }

        const provider = asProvider(event.provider);
        let headers: (readonly [string, string])[] = event.headers
          .filter((h) => !NOT_REPLAYED.has(h.name.toLowerCase()))
          .map((h) => [h.name, h.value] as const);
        if (mode === "resign") {
          const drop = new Set(signatureHeaderNames(provider, endpoint.genericSignatureHeader || undefined));
          const original = headers;
          headers = original.filter(([name]) => !drop.has(name.toLowerCase()));
          headers.push(
            ...signHeaders({
              provider,
              secret: Buffer.from(req.targetSecret, "utf8"),
              body: body ?? new Uint8Array(),
              nowMs: now(),
              url: req.targetUrl,
              headers: original,
              genericSignatureHeader: endpoint.genericSignatureHeader || undefined,
              genericSignaturePrefix: endpoint.genericSignaturePrefix || undefined,
            }),
          );
        }

        const outcome: SendResult = await sendOnce({
          target: vetted.target,
          address: vetted.address,
          family: vetted.family,
          method: event.method,
          headers,
          body,
          connectTimeoutMs: options.connectTimeoutMs,
          totalTimeoutMs: options.totalTimeoutMs,
          maxExcerptBytes: options.maxExcerptBytes,
        });
        const result =
          outcome.kind === "network_error" ? "network_error" : outcome.status >= 200 && outcome.status < 300 ? "delivered" : "rejected";

        let auditId = "";
        try {
          auditId = (
            await catalog.recordReplayAudit({
              audit: {
                accountId: req.accountId,
                endpointId: req.endpointId,
                eventId: req.eventId,
                keyId: req.keyId,
                targetUrl: vetted.target.url.href,
                mode,
                result,
                targetStatus: outcome.kind === "response" ? outcome.status : 0,
                networkFailureReason: outcome.kind === "network_error" ? outcome.reason : "",
                durationMs: BigInt(Math.round(outcome.durationMs)),
                createdAtMs: BigInt(startedAt),
                requestId: currentRequestId() ?? "",
                client,
              },
            })
          ).id;
        } catch (err) {
          // The request went out; its outcome is still the caller's to know.
          logger.error({ err, eventId: req.eventId }, "replay audit not recorded");
        }

        return {
          result,
          targetStatus: outcome.kind === "response" ? outcome.status : 0,
          networkFailureReason: outcome.kind === "network_error" ? outcome.reason : "",
          durationMs: BigInt(Math.round(outcome.durationMs)),
          responseExcerpt: outcome.kind === "response" ? outcome.excerpt : new Uint8Array(),
          excerptTruncated: outcome.kind === "response" ? outcome.excerptTruncated : false,
          sourceBodyTruncated,
          mode,
          targetUrl: req.targetUrl,
          eventId: req.eventId,
          auditId,
          rateLimitLimit: options.dailyLimit,
          rateLimitRemaining: charge.remaining,
          rateLimitReset: secondsToUtcMidnight(startedAt),
        };
      } finally {
        await lease.release();
      }
    },
  };
}
