import { createHash } from "node:crypto";
import type { ServiceImpl } from "@connectrpc/connect";
import type { Endpoint, Event, ReplayService } from "@whc/contracts";
import { AppError, validationFailed } from "@whc/errors";
import { currentRequestId } from "@whc/logging";
import { parseTargetUrl, refusalReason, type SendResult, type Vetted } from "@whc/egress-guard";
import { openCapture } from "@whc/sealing";
import { outboundHeaders } from "./outbound.js";
import { applyEdits } from "./edits.js";
import { createForwardHandlers } from "./forward-service.js";
import { createSignHandler } from "./sign-event.js";
import { createDestinationTest } from "./destination-test.js";
import type { ForwardDeps } from "./forward-attempt.js";
import { secondsToUtcMidnight, utcDay } from "./allowance.js";

/** Replay's collaborators; forwarding's (crypto for target secrets, the sealer for answers, metrics) too. */
export type ReplayServiceDeps = ForwardDeps;

export interface ReplayServiceOptions {
  dailyLimit: number;
  connectTimeoutMs: number;
  totalTimeoutMs: number;
  maxExcerptBytes: number;
}

/**
 * Operation 9, in the order design §3 fixes: the endpoint's replay flag; the target (scheme,
 * then every address its host resolves to); an egress lease (none: nothing sent, nothing
 * recorded, allowance untouched); one unit of the daily allowance (spent: lease released);
 * the request to the vetted address; the audit record; the lease released. A host name that
 * does not resolve is not a refused target but an outcome (design §14): `network_error`,
 * `dns_failure`, charged and audited like one. The forwarding RPCs (ForwardEvent,
 * RecordClientAttempt, CheckForwardTarget) are createForwardHandlers'; SignEvent (fresh
 * signatures for whc listen) is createSignHandler's; TestDestination (a destination's filter and
 * transform on a stored event) is createDestinationTest's.
 */

/** A refused target as the caller sees it: target_not_allowed with its reason, or a malformed URL. */
export function refusedTarget(vetted: Extract<Vetted, { ok: false }>, field = "target_url"): AppError {
  const reason = refusalReason(vetted);
  if (!reason) return validationFailed(field, "format");
  return new AppError("target_not_allowed", `target refused: ${vetted.reason}`, {
    meta: { reason, refusal: vetted.reason, ...(vetted.category ? { category: vetted.category } : {}) },
  });
}
export function createReplayService(deps: ReplayServiceDeps, options: ReplayServiceOptions): ServiceImpl<typeof ReplayService> {
  const now = deps.now ?? Date.now;
  const { catalog, logger } = deps;

  async function source(accountId: string, endpointId: string, eventId: string): Promise<{ endpoint: Endpoint; event: Event }> {
    const { endpoint } = await catalog.getEndpoint({ accountId, endpointId });
    const { event } = await catalog.getEvent({ accountId, endpointId, eventId, markRead: false });
    return { endpoint: endpoint!, event: event! };
  }

  return {
    ...createForwardHandlers(deps, options),
    ...createSignHandler(deps),
    ...createDestinationTest(deps),
    async replayEvent(req) {
      if (!req.accountId) throw validationFailed("account_id", "required");
      const client = req.client === "dashboard" ? "dashboard" : "api";
      const mode = req.mode || (req.targetSecret ? "resign" : "exact");
      if (mode !== "exact" && mode !== "resign") throw validationFailed("mode", "format");
      if (mode === "resign" && !req.targetSecret) throw validationFailed("target_secret", "required");

      const { endpoint, event: stored } = await source(req.accountId, req.endpointId, req.eventId);
      const allowed = client === "dashboard" ? endpoint.replayFromDashboard : endpoint.replayFromApi;
      if (!allowed) throw new AppError("replay_disabled", `replay from ${client} disabled`);

      const vetted = await deps.egress.vet(req.targetUrl);
      const unresolved = !vetted.ok && vetted.reason === "dns_failure";
      if (!vetted.ok && !unresolved) throw refusedTarget(vetted);
      const parsed = parseTargetUrl(req.targetUrl);
      if (!parsed.ok) throw validationFailed("target_url", "format");

      // The body and the request (headers, sub-path, query: ADR 0009) are opened before
      // anything is taken, so a crypto outage charges nothing.
      const { event, body } = await openCapture(deps.opener, stored);
      const sourceBodyTruncated = event.truncated || body === undefined;
      // Edits are checked before anything is taken too: a bad patch charges nothing.
      const request = applyEdits(event.headers, body, sourceBodyTruncated, req.edits);

      const lease = await deps.leases.acquire(parsed.target.url.origin);
      if (!lease) throw new AppError("egress_capacity_exhausted", "no egress lease");
      try {
        const startedAt = now();
        const charge = await catalog.chargeReplay({ accountId: req.accountId, day: utcDay(startedAt), limit: options.dailyLimit });
        if (!charge.allowed) {
          throw new AppError("replay_limit_exceeded", "daily replay allowance spent", {
            meta: { limit: options.dailyLimit, reset: secondsToUtcMidnight(startedAt) },
          });
        }

        const headers = outboundHeaders(
          request.headers,
          event.provider,
          request.body,
          mode === "resign"
            ? {
                secret: Buffer.from(req.targetSecret, "utf8"),
                url: req.targetUrl,
                nowMs: now(),
                genericSignatureHeader: endpoint.genericSignatureHeader,
                genericSignaturePrefix: endpoint.genericSignaturePrefix,
              }
            : undefined,
        );

        const outcome: SendResult = vetted.ok
          ? await deps.egress.send({
              target: vetted.target,
              address: vetted.address,
              family: vetted.family,
              method: event.method,
              headers,
              body: request.body,
              connectTimeoutMs: options.connectTimeoutMs,
              totalTimeoutMs: options.totalTimeoutMs,
              maxExcerptBytes: options.maxExcerptBytes,
            })
          : { kind: "network_error", reason: "dns_failure", durationMs: 0 };
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
                targetUrl: parsed.target.url.href,
                mode,
                result,
                targetStatus: outcome.kind === "response" ? outcome.status : 0,
                networkFailureReason: outcome.kind === "network_error" ? outcome.reason : "",
                durationMs: BigInt(Math.round(outcome.durationMs)),
                createdAtMs: BigInt(startedAt),
                requestId: currentRequestId() ?? "",
                client,
              },
              // The API key's event.replayed, written with the replay's record.
              ...(req.audit ? { context: req.audit } : {}),
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
          edited: request.edited,
          requestSha256: createHash("sha256").update(request.body ?? new Uint8Array()).digest("hex"),
        };
      } finally {
        await lease.release();
      }
    },
  };
}
