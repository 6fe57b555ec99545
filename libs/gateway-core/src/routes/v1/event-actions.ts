import { buildCurlCommand } from "@whc/curl-export";
import { curlExport, curlQuery, isDashboardSession, replayRequest, replayResult, type ReplayResultJson } from "@whc/api-model";
import { webhookUrlOf } from "@whc/api-model/present";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ReplayEditsSchema } from "@whc/contracts";
import type { z } from "zod";
import { openCapture } from "@whc/sealing";
import type { GatewayDeps, GatewayOptions } from "../../deps.js";
import { route, type Route } from "../../route.js";
import { sendWarnings } from "./warnings.js";

type ReplayEditsInit = MessageInitShape<typeof ReplayEditsSchema>;
type ReplayRequestBody = z.output<typeof replayRequest>;
import { auditContext } from "../../audit.js";

const RATE_LIMIT_HEADERS = {
  "RateLimit-Limit": { description: "The account's daily replay allowance.", schema: { type: "integer" } },
  "RateLimit-Remaining": { description: "Replays left today (UTC).", schema: { type: "integer" } },
  "RateLimit-Reset": { description: "Seconds to the next UTC midnight.", schema: { type: "integer" } },
};

/** What an edit changes, for its audit entry: header names set and removed, and how the body was edited. */
function editedParts(edits: NonNullable<ReplayRequestBody["edits"]>): Record<string, unknown> {
  const bodyEdit = (["body", "bodyBase64", "jsonMergePatch", "jsonPatch"] as const).find((k) => edits[k] !== undefined);
  return {
    ...(edits.headers?.set ? { headersSet: Object.keys(edits.headers.set).map((n) => n.toLowerCase()) } : {}),
    ...(edits.headers?.remove ? { headersRemoved: edits.headers.remove.map((n) => n.toLowerCase()) } : {}),
    ...(bodyEdit ? { body: bodyEdit } : {}),
  };
}

/** The API's edits as the replay service takes them; JSON patches travel as JSON text. */
function replayEditsMessage(edits: NonNullable<ReplayRequestBody["edits"]>): ReplayEditsInit {
  const body: ReplayEditsInit["body"] =
    edits.body !== undefined
      ? { case: "bodyBytes", value: Buffer.from(edits.body, "utf8") }
      : edits.bodyBase64 !== undefined
        ? { case: "bodyBytes", value: Buffer.from(edits.bodyBase64, "base64") }
        : edits.jsonMergePatch !== undefined
          ? { case: "jsonMergePatch", value: JSON.stringify(edits.jsonMergePatch) }
          : edits.jsonPatch !== undefined
            ? { case: "jsonPatch", value: JSON.stringify(edits.jsonPatch) }
            : { case: undefined };
  return { setHeaders: edits.headers?.set ?? {}, removeHeaders: edits.headers?.remove ?? [], body };
}

/** Operations 8 (cURL export) and 9 (replay). */
export function eventActionRoutes(deps: GatewayDeps, options: GatewayOptions): Route[] {
  const { catalog } = deps;
  /**
   * After a replay: whether the signature an exact one carried was already too old, whether the
   * body sent was stored redacted. Never fails the replay.
   */
  async function replayWarnings(accountId: string, endpointId: string, eventId: string, exact: boolean) {
    try {
      const { event } = await catalog.getEvent({ accountId, endpointId, eventId, markRead: false });
      return event ? sendWarnings(event, exact, Date.now()) : [];
    } catch {
      return [];
    }
  }
  return [
    route({
      method: "GET",
      path: "/v1/endpoints/{endpointId}/events/{eventId}/curl",
      scope: "events:read",
      operationId: "exportCurl",
      summary: "Export an event as a cURL command",
      description:
        "One line of bash that sends the captured request again to its `webhookUrl` (sub-path and query included) with " +
        "its method, headers and body, quoted so that nothing in it can break out. Credentials and signature headers are " +
        "masked (`[MASKED]`) unless `unmasked=true`; `headersMasked`, `bodyOmitted` and `byteIdentical` say how faithful " +
        "the command is (`byteIdentical` is false for an event stored redacted), and `warnings` says when the captured " +
        "signature is already older than its provider accepts (`signature_timestamp_stale`) or the event was stored " +
        "redacted (`body_redacted`).",
      tags: ["events"],
      query: curlQuery,
      success: { status: 200, schema: curlExport, description: "A single-line bash cURL command." },
      errors: [400],
      async handler(ctx, { auth, params, query }) {
        const { endpointId, eventId } = params as { endpointId: string; eventId: string };
        const unmasked = query.unmasked ?? false;
        const { endpoint } = await catalog.getEndpoint({ accountId: auth.accountId, endpointId });
        const audit = auditContext(ctx, auth, { unmasked }, "event.curl_exported");
        const { event } = await catalog.getEvent({ accountId: auth.accountId, endpointId, eventId, markRead: false, audit });
        // Headers, sub-path and query are sealed with the body (ADR 0009).
        const { event: e, body } = await openCapture(deps.opener, event!);
        const signatureHeader = endpoint!.genericSignatureHeader;
        const warnings = sendWarnings(e, true, Date.now());
        const exported = buildCurlCommand({
          method: e.method,
          url: webhookUrlOf(options.ingestPublicUrl, endpointId) + e.path,
          headers: e.headers.map((h) => [h.name, h.value] as const),
          body,
          bodyTruncated: e.truncated,
          unmasked,
          extraMaskedHeaders: signatureHeader ? [signatureHeader] : [],
        });
        // A redacted event's command sends the redacted bytes (design §16).
        const redacted = warnings.some((w) => w.code === "body_redacted");
        return { ...exported, byteIdentical: exported.byteIdentical && !redacted, ...(warnings.length > 0 ? { warnings } : {}) };
      },
    }),
    route({
      method: "POST",
      path: "/v1/endpoints/{endpointId}/events/{eventId}/replay",
      scope: "events:replay",
      operationId: "replayEvent",
      summary: "Replay an event to a URL",
      description:
        "Sends the captured request to `target_url` and answers what the target said. `exact` (the default) sends the " +
        "captured method, headers and body bytes; `resign` (the default when `target_secret` is given) recomputes the " +
        "provider's signature headers with `target_secret` and a fresh timestamp, for a target that verifies them. " +
        "Redirects are answers, never followed; `response_excerpt_base64` holds the first 4 KiB of the answer. An event " +
        "stored redacted is sent as stored, with `warnings: [{\"code\":\"body_redacted\"}]`.\n\n" +
        "The target must pass the SSRF guard (http or https; public addresses only, unless " +
        "`WHC_REPLAY_ALLOW_PRIVATE_TARGETS`), and each replay spends one unit of the account's daily allowance (the " +
        "`RateLimit-*` headers).\n\n" +
        "Errors: 403 `replay_disabled` when the endpoint's `replayFromApi` is false (its `replayFromDashboard`, for a " +
        "key with scope `dashboard`: the dashboard's session; no request header changes which flag applies); 400 `target_not_allowed` (nothing " +
        "spent); 429 `replay_limit_exceeded`, with `Retry-After` at the next UTC midnight; 503 " +
        "`egress_capacity_exhausted` when the target's origin has no free egress slot (nothing sent, nothing spent).\n\n" +
        "`edits` (extension) changes the request first: `headers.set` and `headers.remove`, then at most one body edit " +
        "(`body` text, `bodyBase64`, `jsonMergePatch`, `jsonPatch` on a JSON body); with `resign` the edited bytes are " +
        "signed. The answer then says `edited: true`; `request_sha256` is the SHA-256 of the body sent. A patch of a body " +
        "that is not stored whole or is not JSON, or a failing `test` operation, is 409 `conflict`; a patch that does not " +
        "apply is 400 `validation_failed` (nothing spent either way).",
      tags: ["replay"],
      body: replayRequest,
      bodyRequired: true,
      success: {
        status: 200,
        schema: replayResult,
        description: "The target was contacted (or failed at the network level).",
        headers: RATE_LIMIT_HEADERS,
      },
      errors: [400, 403, 413, 415, 429],
      async handler(ctx, { auth, params, body }): Promise<ReplayResultJson> {
        // Only the dashboard's session is the dashboard (design §14): a header says nothing.
        const client = isDashboardSession(auth.scopes) ? "dashboard" : "api";
        const res = await deps.replay.replayEvent({
          accountId: auth.accountId,
          endpointId: params.endpointId!,
          eventId: params.eventId!,
          targetUrl: body.target_url,
          mode: body.mode ?? "",
          targetSecret: body.target_secret ?? "",
          client,
          keyId: auth.keyId,
          ...(body.edits ? { edits: replayEditsMessage(body.edits) } : {}),
          // Which parts an edited replay changed (design §19): names only, never the values.
          audit: auditContext(ctx, auth, body.edits ? { edited: editedParts(body.edits) } : undefined),
        });
        ctx.set("RateLimit-Limit", String(res.rateLimitLimit));
        ctx.set("RateLimit-Remaining", String(res.rateLimitRemaining));
        ctx.set("RateLimit-Reset", String(res.rateLimitReset));
        const warnings = await replayWarnings(auth.accountId, params.endpointId!, params.eventId!, res.mode === "exact");
        return {
          result: res.result as ReplayResultJson["result"],
          ...(res.targetStatus ? { target_status: res.targetStatus } : {}),
          ...(res.networkFailureReason ? { network_failure_reason: res.networkFailureReason } : {}),
          duration_ms: Number(res.durationMs),
          response_excerpt_base64: Buffer.from(res.responseExcerpt).toString("base64"),
          excerpt_truncated: res.excerptTruncated,
          source_body_truncated: res.sourceBodyTruncated,
          mode: res.mode as ReplayResultJson["mode"],
          target_url: res.targetUrl,
          event_id: res.eventId,
          ...(res.auditId ? { audit_id: res.auditId } : {}),
          ...(warnings.length > 0 ? { warnings } : {}),
          ...(res.edited ? { edited: true } : {}),
          ...(res.requestSha256 ? { request_sha256: res.requestSha256 } : {}),
        };
      },
    }),
  ];
}
