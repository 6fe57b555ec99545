import { triggerRequest, triggerResult, EVENT_ID_HEADER, type TriggerResultJson, type TriggerUnavailableCause } from "@whc/api-model";
import { webhookUrlOf } from "@whc/api-model/present";
import { sendOnce, vetTarget } from "@whc/egress-guard";
import { AppError } from "@whc/errors";
import { buildTrigger, PROVIDERS, type JsonValue, type Provider, type TriggerRequest } from "@whc/signatures";
import type { GatewayDeps, GatewayOptions } from "../../deps.js";
import { route, type Route } from "../../route.js";
import { recordAfter } from "../../audit.js";

/** The longest ingest may take: an endpoint's configured answer may wait up to 30 s after the commit. */
const DEFAULT_TRIGGER_TIMEOUT_MS = 35_000;
const CONNECT_TIMEOUT_MS = 5_000;

function unavailable(cause: TriggerUnavailableCause, status?: number): AppError {
  return new AppError("trigger_unavailable", `trigger: ${cause}`, { meta: status === undefined ? { cause } : { cause, status } });
}

/** The sample, built and signed as the endpoint's provider would send it to its webhookUrl. */
function sampleFor(provider: string, body: { eventType: string; set?: Record<string, unknown> | undefined }, secret: Buffer | undefined, url: string): TriggerRequest {
  const known = (PROVIDERS as readonly string[]).includes(provider) ? (provider as Provider) : "generic";
  const built = buildTrigger({
    provider: known,
    eventType: body.eventType,
    set: body.set as Record<string, JsonValue> | undefined,
    secret,
    url,
    verifyWithSecret: true,
  });
  if (built.ok) return built.request;
  switch (built.reason) {
    case "no_samples":
      throw unavailable("no_samples");
    case "cannot_sign":
      throw unavailable("public_key_secret");
    case "unknown_event_type":
      throw new AppError("validation_failed", `eventType: not a sample of ${known}`, {
        field: "eventType",
        fieldReason: "unknown",
        meta: { allowed: built.known.join("\n") },
      });
    case "bad_set":
      throw new AppError("validation_failed", `set: ${built.refused.detail}`, {
        field: built.refused.path ? `set.${built.refused.path}` : "set",
        fieldReason: built.refused.reason,
      });
  }
}

/**
 * Sends the request to the deployment's own ingest (ADR 0055): `ingestUrl` is configuration
 * (the all-in-one process's own listener, WHC_INGEST_INTERNAL_URL, or WHC_INGEST_PUBLIC_URL),
 * never input, and the path is the endpoint's own; the address is resolved once and the request
 * sent to it, redirects not followed. Private and loopback addresses are allowed for this one
 * destination, since a deployment's ingest usually is one.
 */
async function sendToIngest(ingestUrl: string, endpointId: string, request: TriggerRequest, timeoutMs: number): Promise<string> {
  const vetted = await vetTarget(`${ingestUrl}/h/${endpointId}`, { allowPrivate: true });
  if (!vetted.ok) throw new AppError("service_unavailable", `trigger: ingest at ${ingestUrl} refused (${vetted.reason})`);
  const sent = await sendOnce({
    target: vetted.target,
    address: vetted.address,
    family: vetted.family,
    method: request.method,
    headers: request.headers,
    body: request.body,
    connectTimeoutMs: Math.min(CONNECT_TIMEOUT_MS, timeoutMs),
    totalTimeoutMs: timeoutMs,
    maxExcerptBytes: 0,
  });
  if (sent.kind === "network_error") throw new AppError("service_unavailable", `trigger: ingest unreachable (${sent.reason})`);
  const eventId = sent.headers[EVENT_ID_HEADER.toLowerCase()];
  if (typeof eventId === "string" && eventId.length > 0) return eventId;
  if (sent.status === 404) throw new AppError("not_found", "trigger: ingest knows no such endpoint");
  throw unavailable("not_captured", sent.status);
}

/** `POST /v1/endpoints/{id}/trigger` (design §19). */
export function triggerRoutes(deps: GatewayDeps, options: GatewayOptions): Route[] {
  const ingestUrl = options.ingestUrl ?? options.ingestPublicUrl;
  const timeoutMs = options.triggerTimeoutMs ?? DEFAULT_TRIGGER_TIMEOUT_MS;
  return [
    route({
      method: "POST",
      path: "/v1/endpoints/{endpointId}/trigger",
      scope: "events:replay",
      operationId: "triggerEvent",
      summary: "Send a sample event to an endpoint",
      description:
        "Builds a realistic sample of the endpoint's provider's `eventType` (the provider list's `sampleEventTypes`), " +
        "with fresh ids and timestamps and the `set` fields overridden (`{\"data.object.amount\": 500}`: dotted paths " +
        "into a JSON body, array elements by index; field names of a form body), signs it with the endpoint's secret " +
        "exactly as the provider signs (unsigned when the endpoint has none), and sends it to the endpoint's own " +
        "`webhookUrl`, where it is captured, verified, answered and forwarded like any delivery. Answers the captured " +
        "event's id.\n\n" +
        "Errors: 400 `validation_failed` with `details.field` `eventType` (`details.allowed` lists the provider's " +
        "sample types) or `set.<path>`; 409 `trigger_unavailable` with `details.cause`: `no_samples` (a `generic` " +
        "endpoint: set its `provider`), `public_key_secret` (Discord and SendGrid endpoints hold a public key, which " +
        "cannot sign; `whc trigger --to` signs with your own private key), `not_captured` (ingest answered " +
        "`details.status` without storing it: a paused endpoint, say); 503 `service_unavailable` when ingest does not answer.",
      tags: ["endpoints", "events"],
      extension: true,
      body: triggerRequest,
      bodyRequired: true,
      success: { status: 200, schema: triggerResult, description: "The sample was captured as this event." },
      errors: [400, 409, 413, 415, 503],
      async handler(ctx, { auth, params, body }): Promise<TriggerResultJson> {
        const endpointId = params.endpointId!;
        const { endpoint } = await deps.catalog.getEndpoint({ accountId: auth.accountId, endpointId, includeSealedSecret: true });
        if (!endpoint) throw new AppError("not_found", "endpoint not found");
        const secret = endpoint.sealedSecret.length > 0 ? Buffer.from((await deps.crypto.openSecret({ sealed: endpoint.sealedSecret })).plaintext) : undefined;
        const request = sampleFor(endpoint.provider, body, secret, webhookUrlOf(options.ingestPublicUrl, endpointId));
        const eventId = await sendToIngest(ingestUrl, endpointId, request, timeoutMs);
        // Ingest captured it: the entry follows the capture (ADR 0053).
        await recordAfter(deps, ctx, auth, { action: "event.triggered", endpointId, eventId, details: { eventType: body.eventType } });
        return { eventId };
      },
    }),
  ];
}
