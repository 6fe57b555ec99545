import type Router from "@koa/router";
import { buildCurlCommand } from "@whc/curl-export";
import { webhookUrlOf } from "@whc/api-model";
import type { GatewayDeps, GatewayOptions } from "../../deps.js";
import { parseOrThrow } from "../../validation.js";
import { curlQuerySchema, replayBodySchema } from "../../schemas.js";
import { readJsonObject } from "../../middleware/json-body.js";
import type { AuthState } from "../../middleware/auth.js";
import { pathId } from "./endpoints.js";

/** The header a browser client sends so that `replayFromDashboard` applies instead of `replayFromApi`. */
export const CLIENT_HEADER = "x-whc-client";

/** Operations 8 (cURL export) and 9 (replay). */
export function eventActionRoutes(router: Router, deps: GatewayDeps, options: GatewayOptions): void {
  const { catalog } = deps;

  router.get("/v1/endpoints/:endpointId/events/:eventId/curl", async (ctx) => {
    const { accountId } = ctx.state.auth as AuthState;
    const endpointId = pathId(ctx.params.endpointId, "endpointId");
    const eventId = pathId(ctx.params.eventId, "eventId");
    const { unmasked = false } = parseOrThrow(curlQuerySchema, ctx.query);
    const { endpoint } = await catalog.getEndpoint({ accountId, endpointId });
    const { event } = await catalog.getEvent({ accountId, endpointId, eventId, markRead: false });
    const e = event!;
    let body: Uint8Array | undefined;
    if (e.bodyStored && e.body) {
      const opened = await deps.opener.open(endpointId, e.body);
      if (opened.ok) body = opened.plaintext;
    }
    const signatureHeader = endpoint!.genericSignatureHeader;
    ctx.body = buildCurlCommand({
      method: e.method,
      url: webhookUrlOf(options.ingestPublicUrl, endpointId) + e.path,
      headers: e.headers.map((h) => [h.name, h.value] as const),
      body,
      bodyTruncated: e.truncated,
      unmasked,
      extraMaskedHeaders: signatureHeader ? [signatureHeader] : [],
    });
  });

  router.post("/v1/endpoints/:endpointId/events/:eventId/replay", async (ctx) => {
    const { accountId, keyId } = ctx.state.auth as AuthState;
    const endpointId = pathId(ctx.params.endpointId, "endpointId");
    const eventId = pathId(ctx.params.eventId, "eventId");
    const body = parseOrThrow(replayBodySchema, await readJsonObject(ctx));
    const client = ctx.get(CLIENT_HEADER).toLowerCase() === "dashboard" ? "dashboard" : "api";
    const res = await deps.replay.replayEvent({
      accountId,
      endpointId,
      eventId,
      targetUrl: body.target_url,
      mode: body.mode ?? "",
      targetSecret: body.target_secret ?? "",
      client,
      keyId,
    });
    ctx.set("RateLimit-Limit", String(res.rateLimitLimit));
    ctx.set("RateLimit-Remaining", String(res.rateLimitRemaining));
    ctx.set("RateLimit-Reset", String(res.rateLimitReset));
    ctx.body = {
      result: res.result,
      ...(res.targetStatus ? { target_status: res.targetStatus } : {}),
      ...(res.networkFailureReason ? { network_failure_reason: res.networkFailureReason } : {}),
      duration_ms: Number(res.durationMs),
      response_excerpt_base64: Buffer.from(res.responseExcerpt).toString("base64"),
      excerpt_truncated: res.excerptTruncated,
      source_body_truncated: res.sourceBodyTruncated,
      mode: res.mode,
      target_url: res.targetUrl,
      event_id: res.eventId,
      ...(res.auditId ? { audit_id: res.auditId } : {}),
    };
  });
}
