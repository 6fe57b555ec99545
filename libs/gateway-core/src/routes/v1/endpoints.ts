import { create } from "@bufbuild/protobuf";
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { EndpointPatchSchema, EndpointSchema, type Endpoint } from "@whc/contracts";
import { AppError, validationFailed } from "@whc/errors";
import {
  ENDPOINT_PAGE_DEFAULT,
  createEndpointRequest,
  endpoint,
  endpointList,
  extension,
  listEndpointsQuery,
  redactsAnything,
  updateEndpointRequest,
  type DedupeSettings,
  type RedactSettings,
  type Warning,
} from "@whc/api-model";
import { endpointJson } from "@whc/api-model/present";
import { PROVIDER_NAMES } from "@whc/signatures";
import type { GatewayDeps, GatewayOptions } from "../../deps.js";
import { route, type Route } from "../../route.js";
import type { AuthState } from "../../middleware/auth.js";
import { forbidden } from "../../scopes.js";
import { auditContext } from "../../audit.js";
import { MAX_ENDPOINT_BODY_BYTES } from "../../middleware/json-body.js";
import { requireForwardFor } from "./forward-settings.js";
import { destinationsOfNewEndpoint, destinationsPatch } from "./destination-settings.js";
import { inboundOfNewEndpoint, inboundPatch } from "./inbound-settings.js";

/** The stored form of `redact`: "" when it redacts nothing (absent, null or every list empty). */
function storedRedactJson(redact: RedactSettings | null | undefined): string {
  return redactsAnything(redact ?? undefined) ? JSON.stringify(redact) : "";
}

/** The stored form of `dedupe`: "" for none (absent or null). */
function storedDedupeJson(dedupe: DedupeSettings | null | undefined): string {
  return dedupe ? JSON.stringify(dedupe) : "";
}

/**
 * A proxy endpoint's sender gets its destination's answer, so its captures are never held back
 * as duplicates: `dedupe` is refused there (design §17, as a proxy's filter is).
 */
function refuseProxyDedupe(field: "dedupe" | "operatingMode"): never {
  throw validationFailed(field, "unsupported", "a proxy endpoint forwards every capture to answer its sender: it takes no dedupe");
}

/**
 * A PATCH's dedupe against the mode the endpoint will have (the mode given, else the stored
 * one): dedupe on a proxy endpoint is refused, and so is turning an endpoint that deduplicates
 * into a proxy one without `dedupe: null`. Checked against what is stored now; ingest never
 * deduplicates a proxy endpoint's captures whatever a concurrent change left stored.
 */
async function checkDedupePatch(
  catalog: GatewayDeps["catalog"],
  ref: { accountId: string; endpointId: string },
  dedupe: DedupeSettings | null | undefined,
  operatingMode: string | undefined,
): Promise<void> {
  if (dedupe === null || (dedupe === undefined && operatingMode !== "proxy")) return;
  if (dedupe !== undefined && operatingMode !== undefined) {
    if (operatingMode === "proxy") refuseProxyDedupe("dedupe");
    return;
  }
  const { endpoint } = await catalog.getEndpoint(ref);
  if (dedupe !== undefined && endpoint?.operatingMode === "proxy") refuseProxyDedupe("dedupe");
  if (dedupe === undefined && endpoint?.dedupeJson) refuseProxyDedupe("operatingMode");
}

const SLUG_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

function randomSlug(): string {
  const bytes = randomBytes(10);
  return `ep-${[...bytes].map((b) => SLUG_ALPHABET[b % SLUG_ALPHABET.length]).join("")}`;
}

/** Operation 2's body, with `provider` narrowed to the providers of the registry. */
export const createEndpointBody = createEndpointRequest.extend({
  provider: z.enum(PROVIDER_NAMES).optional().meta({ ...extension }),
});

/** `PATCH /v1/endpoints/{id}`'s body, `provider` narrowed the same way. */
export const updateEndpointBody = updateEndpointRequest.extend({
  provider: z.enum(PROVIDER_NAMES).optional(),
});

/**
 * A page of a restricted key's endpoints (design §15): its own ids in the list's order (by id
 * ascending), after `after`, each read as the list would show it; one deleted since is left out.
 */
async function restrictedPage(catalog: GatewayDeps["catalog"], auth: AuthState, after: string, limit: number): Promise<{ endpoints: Endpoint[]; hasMore: boolean }> {
  const ids = [...auth.endpointIds].sort().filter((id) => id > after);
  const endpoints: Endpoint[] = [];
  let i = 0;
  for (; i < ids.length && endpoints.length < limit; i += 1) {
    try {
      endpoints.push((await catalog.getEndpoint({ accountId: auth.accountId, endpointId: ids[i]!, includeBreakers: true })).endpoint!);
    } catch (err) {
      if (!(AppError.is(err) && err.reason === "not_found")) throw err;
    }
  }
  return { endpoints, hasMore: i < ids.length };
}

/** Operation 1, paged (design §14). */
function listEndpointsRoute(catalog: GatewayDeps["catalog"], present: (e: Parameters<typeof endpointJson>[0]) => ReturnType<typeof endpointJson>): Route {
  return route({
    method: "GET",
    path: "/v1/endpoints",
    scope: "endpoints:read",
    operationId: "listEndpoints",
    summary: "List endpoints",
    description: "The account's endpoints, each with its `webhookUrl`, settings and event counts, by id ascending (creation order), `limit` at a time (default 100); `nextAfter` names where the next page starts, present only when more follow.",
    tags: ["endpoints"],
    query: listEndpointsQuery,
    success: {
      status: 200,
      schema: endpointList,
      description: "The account's endpoints by id ascending (creation order), `limit` at a time; `nextAfter` when more follow.",
    },
    errors: [400],
    async handler(_ctx, { auth, query }) {
      const limit = query.limit ?? ENDPOINT_PAGE_DEFAULT;
      const after = query.after?.toLowerCase() ?? "";
      const res =
        auth.endpointIds.length > 0
          ? await restrictedPage(catalog, auth, after, limit)
          : await catalog.listEndpoints({ accountId: auth.accountId, after, limit, includeBreakers: true });
      const last = res.endpoints.at(-1);
      return { items: res.endpoints.map(present), ...(res.hasMore && last ? { nextAfter: last.id } : {}) };
    },
  });
}

/** The endpoint update (extension, design §9). */
function updateEndpointRoute(deps: GatewayDeps, options: GatewayOptions, present: (e: Parameters<typeof endpointJson>[0]) => ReturnType<typeof endpointJson>): Route {
  const { catalog, crypto, bus } = deps;
  return route({
    method: "PATCH",
    path: "/v1/endpoints/{id}",
    scope: "endpoints:write",
    operationId: "updateEndpoint",
    summary: "Update an endpoint",
    description:
      "Changes the fields given and answers the endpoint as updated; ingest applies the change within a second. A field " +
      "given replaces the stored one; `null` removes `secret`, `response`, `forward`, `redact` or `dedupe` (new `forward` settings without " +
      "`targetSecret` keep the stored one). A new `secret` leaves the previous one verifying for `WHC_SECRET_GRACE_S` " +
      "(a day by default), so a provider that switches over gradually is never reported as failing; a `response` given " +
      "restarts its sequence. `{\"status\": \"paused\"}` pauses the endpoint: ingest then answers its senders 503 and " +
      "stores nothing.\n\n" +
      "Errors: 400 `validation_failed` (`slug` given: `reason: immutable`; an unknown field: `reason: unknown`; `relay` " +
      "or `proxy` left without `forward`: `field: forward`, `reason: required`), or `target_not_allowed` for a forward " +
      "URL the egress guard refuses; `dedupe` on a proxy endpoint, or `proxy` for an endpoint that keeps its `dedupe`: " +
      "`reason: unsupported`.",
    tags: ["endpoints"],
    extension: true,
    body: updateEndpointBody,
    maxBodyBytes: MAX_ENDPOINT_BODY_BYTES,
    bodyRequired: true,
    success: { status: 200, schema: endpoint, description: "The endpoint as updated. Ingest sees the change within a second." },
    errors: [400, 413, 415],
    async handler(ctx, { auth, params, body }) {
      const { secret, response, forward, destinations, inbound, redact, dedupe, ...plain } = body;
      const warnings: Warning[] = [];
      const ref = { accountId: auth.accountId, endpointId: params.id! };
      await checkDedupePatch(catalog, ref, dedupe, body.operatingMode);
      // A patch leaving a relay or proxy endpoint without destinations is refused by the
      // catalog inside the update (validation_failed on forward), against what is stored then.
      const patch = create(EndpointPatchSchema, {
        ...plain,
        ...(await destinationsPatch(deps, ref, { forward, destinations }, body.operatingMode, options.ingestPublicUrl, warnings)),
        ...(await inboundPatch(deps, auth.accountId, params.id!, inbound)),
        ...(typeof secret === "string"
          ? { sealedSecret: (await crypto.sealSecret({ plaintext: Buffer.from(secret, "utf8") })).sealed }
          : {}),
        clearSecret: secret === null,
        // A response given restarts its sequence: "the n-th capture since the sequence was set".
        ...(response !== undefined ? { responseJson: response === null ? "" : JSON.stringify(response), resetSequence: true } : {}),
        ...(redact !== undefined ? { redactJson: storedRedactJson(redact) } : {}),
        ...(dedupe !== undefined ? { dedupeJson: storedDedupeJson(dedupe) } : {}),
      });
      // The entry names the fields changed, never their values (a secret among them).
      const audit = auditContext(ctx, auth, { fields: Object.keys(body).sort() });
      const res = await catalog.updateEndpoint({ accountId: auth.accountId, endpointId: params.id!, patch, audit });
      bus.publishEndpointChanged(params.id!);
      return { ...present(res.endpoint!), ...(warnings.length > 0 ? { warnings } : {}) };
    },
  });
}

/** Operations 1-4 and the endpoint update (extension). */
export function endpointRoutes(deps: GatewayDeps, options: GatewayOptions): Route[] {
  const { catalog, crypto, bus } = deps;
  const present = (e: Parameters<typeof endpointJson>[0]) => endpointJson(e, options.ingestPublicUrl);

  return [
    listEndpointsRoute(catalog, present),
    route({
      method: "POST",
      path: "/v1/endpoints",
      scope: "endpoints:write",
      operationId: "createEndpoint",
      summary: "Create an endpoint",
      description:
        "Creates an endpoint, ready to receive at once at the `webhookUrl` of the answer; `Location` names the new " +
        "resource. Every field is optional: `slug` defaults to a random `ep-...`, `displayName` to the slug, " +
        "`operatingMode` to `capture`, `status` to `active`, `provider` to `generic`. A `secret` turns on signature " +
        "verification with the provider's scheme (write-only: the Endpoint shows `secretSet`). `relay` and `proxy` need " +
        "`forward` settings, whose URL the egress guard vets now. `redact` names what ingest replaces before storing a " +
        "capture (design §16); `dedupe` how repeated captures are told (design §17: stored, answered, shown `duplicateOf` " +
        "the first, not forwarded).\n\n" +
        "Errors: 409 `slug_taken` when the account already has the slug; 400 `validation_failed` naming the field " +
        "(`forward` with `reason: required` for a forwarding mode without settings), or `target_not_allowed` for a " +
        "forward URL the egress guard refuses; `dedupe` on a proxy endpoint: `reason: unsupported`.",
      tags: ["endpoints"],
      body: createEndpointBody,
      maxBodyBytes: MAX_ENDPOINT_BODY_BYTES,
      success: {
        status: 201,
        schema: endpoint,
        description: "Created.",
        headers: { Location: { schema: { type: "string" } } },
      },
      errors: [400, 409, 413, 415, 429],
      async handler(ctx, { auth, body }) {
        // A key restricted to endpoints cannot make another one (design §15).
        if (auth.endpointIds.length > 0) throw forbidden(undefined, "endpointIds");
        const slug = body.slug ?? randomSlug();
        const operatingMode = body.operatingMode ?? "capture";
        requireForwardFor(operatingMode, body.forward !== undefined || body.destinations !== undefined);
        if (body.dedupe && operatingMode === "proxy") refuseProxyDedupe("dedupe");
        const warnings: Warning[] = [];
        const destinations = await destinationsOfNewEndpoint(deps, body, operatingMode, options.ingestPublicUrl, warnings);
        const sealedSecret = body.secret
          ? (await crypto.sealSecret({ plaintext: Buffer.from(body.secret, "utf8") })).sealed
          : new Uint8Array();
        const res = await catalog.createEndpoint({
          endpoint: create(EndpointSchema, {
            accountId: auth.accountId,
            slug,
            displayName: body.displayName ?? slug,
            operatingMode,
            status: body.status ?? "active",
            replayFromDashboard: body.replayFromDashboard ?? true,
            replayFromApi: body.replayFromApi ?? true,
            provider: body.provider ?? "generic",
            sealedSecret,
            genericSignatureHeader: body.genericSignatureHeader ?? "",
            genericSignaturePrefix: body.genericSignaturePrefix ?? "",
            responseJson: body.response ? JSON.stringify(body.response) : "",
            forwardJson: destinations.forwardJson,
            sealedDestinationSecrets: destinations.sealedDestinationSecrets,
            ...(await inboundOfNewEndpoint(crypto, body.inbound)),
            redactJson: storedRedactJson(body.redact),
            dedupeJson: storedDedupeJson(body.dedupe),
            source: "api",
          }),
          audit: auditContext(ctx, auth),
        });
        const created = res.endpoint!;
        bus.publishEndpointChanged(created.id);
        ctx.set("Location", `/v1/endpoints/${created.id}`);
        return { ...present(created), ...(warnings.length > 0 ? { warnings } : {}) };
      },
    }),
    route({
      method: "GET",
      path: "/v1/endpoints/{id}",
      scope: "endpoints:read",
      operationId: "getEndpoint",
      summary: "Get an endpoint",
      description:
        "One endpoint of the account, as the list shows it. Another account's endpoint is 404, exactly as an unknown one.",
      tags: ["endpoints"],
      success: { status: 200, schema: endpoint, description: "The endpoint." },
      errors: [400],
      async handler(_ctx, { auth, params }) {
        const res = await catalog.getEndpoint({ accountId: auth.accountId, endpointId: params.id!, includeBreakers: true });
        return present(res.endpoint!);
      },
    }),
    updateEndpointRoute(deps, options, present),
    route({
      method: "DELETE",
      path: "/v1/endpoints/{id}",
      scope: "endpoints:write",
      operationId: "deleteEndpoint",
      summary: "Delete an endpoint",
      description:
        "Deletes the endpoint and every event it holds; its `webhookUrl` answers 404 from then on. A second delete is " +
        "404.",
      tags: ["endpoints"],
      success: { status: 204, description: "Deleted, with its events." },
      errors: [400],
      async handler(ctx, { auth, params }) {
        await catalog.deleteEndpoint({ accountId: auth.accountId, endpointId: params.id!, audit: auditContext(ctx, auth) });
        bus.publishEndpointChanged(params.id!);
      },
    }),
  ];
}
