import { create } from "@bufbuild/protobuf";
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { EndpointPatchSchema, EndpointSchema } from "@whc/contracts";
import {
  ENDPOINT_PAGE_DEFAULT,
  createEndpointRequest,
  endpoint,
  endpointList,
  extension,
  listEndpointsQuery,
  updateEndpointRequest,
} from "@whc/api-model";
import { endpointJson } from "@whc/api-model/present";
import { PROVIDER_NAMES } from "@whc/signatures";
import type { GatewayDeps, GatewayOptions } from "../../deps.js";
import { route, type Route } from "../../route.js";
import { forwardPatch, requireForwardFor, sealTargetSecret, storedForwardJson, vetForwardTarget } from "./forward-settings.js";

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

/** Operations 1-4 and the endpoint update (extension). */
export function endpointRoutes(deps: GatewayDeps, options: GatewayOptions): Route[] {
  const { catalog, crypto, bus } = deps;
  const present = (e: Parameters<typeof endpointJson>[0]) => endpointJson(e, options.ingestPublicUrl);

  return [
    route({
      method: "GET",
      path: "/v1/endpoints",
      operationId: "listEndpoints",
      query: listEndpointsQuery,
      success: {
        status: 200,
        schema: endpointList,
        description: "The account's endpoints by id ascending (creation order), `limit` at a time; `nextAfter` when more follow.",
      },
      errors: [400],
      async handler(_ctx, { auth, query }) {
        const limit = query.limit ?? ENDPOINT_PAGE_DEFAULT;
        const res = await catalog.listEndpoints({ accountId: auth.accountId, after: query.after?.toLowerCase() ?? "", limit });
        const last = res.endpoints.at(-1);
        return { items: res.endpoints.map(present), ...(res.hasMore && last ? { nextAfter: last.id } : {}) };
      },
    }),
    route({
      method: "POST",
      path: "/v1/endpoints",
      operationId: "createEndpoint",
      body: createEndpointBody,
      success: {
        status: 201,
        schema: endpoint,
        description: "Created.",
        headers: { Location: { schema: { type: "string" } } },
      },
      errors: [400, 409, 413, 415, 429],
      async handler(ctx, { auth, body }) {
        const slug = body.slug ?? randomSlug();
        const { forward } = body;
        const operatingMode = body.operatingMode ?? "capture";
        requireForwardFor(operatingMode, forward !== undefined);
        if (forward) await vetForwardTarget(deps.replay, forward.url);
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
            forwardJson: forward ? storedForwardJson(forward) : "",
            sealedTargetSecret: forward?.targetSecret ? await sealTargetSecret(crypto, forward.targetSecret) : new Uint8Array(),
            source: "api",
          }),
        });
        const created = res.endpoint!;
        bus.publishEndpointChanged(created.id);
        ctx.set("Location", `/v1/endpoints/${created.id}`);
        return present(created);
      },
    }),
    route({
      method: "GET",
      path: "/v1/endpoints/{id}",
      operationId: "getEndpoint",
      success: { status: 200, schema: endpoint, description: "The endpoint." },
      errors: [400],
      async handler(_ctx, { auth, params }) {
        const res = await catalog.getEndpoint({ accountId: auth.accountId, endpointId: params.id! });
        return present(res.endpoint!);
      },
    }),
    route({
      method: "PATCH",
      path: "/v1/endpoints/{id}",
      operationId: "updateEndpoint",
      extension: true,
      body: updateEndpointBody,
      bodyRequired: true,
      success: { status: 200, schema: endpoint, description: "The endpoint as updated. Ingest sees the change within a second." },
      errors: [400, 413, 415],
      async handler(_ctx, { auth, params, body }) {
        const { secret, response, forward, ...plain } = body;
        // A patch leaving a relay or proxy endpoint without forward settings is refused by the
        // catalog inside the update (validation_failed on forward), against what is stored then.
        const patch = create(EndpointPatchSchema, {
          ...plain,
          ...(await forwardPatch(deps, forward)),
          ...(typeof secret === "string"
            ? { sealedSecret: (await crypto.sealSecret({ plaintext: Buffer.from(secret, "utf8") })).sealed }
            : {}),
          clearSecret: secret === null,
          // A response given restarts its sequence: "the n-th capture since the sequence was set".
          ...(response !== undefined ? { responseJson: response === null ? "" : JSON.stringify(response), resetSequence: true } : {}),
        });
        const res = await catalog.updateEndpoint({ accountId: auth.accountId, endpointId: params.id!, patch });
        bus.publishEndpointChanged(params.id!);
        return present(res.endpoint!);
      },
    }),
    route({
      method: "DELETE",
      path: "/v1/endpoints/{id}",
      operationId: "deleteEndpoint",
      success: { status: 204, description: "Deleted, with its events." },
      errors: [400],
      async handler(_ctx, { auth, params }) {
        await catalog.deleteEndpoint({ accountId: auth.accountId, endpointId: params.id! });
        bus.publishEndpointChanged(params.id!);
      },
    }),
  ];
}
