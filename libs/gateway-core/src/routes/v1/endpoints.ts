import type Router from "@koa/router";
import { create } from "@bufbuild/protobuf";
import { randomBytes } from "node:crypto";
import { EndpointSchema } from "@whc/contracts";
import { endpointJson } from "@whc/api-model";
import type { GatewayDeps, GatewayOptions } from "../../deps.js";
import { readJsonObject } from "../../middleware/json-body.js";
import { parseOrThrow } from "../../validation.js";
import { createEndpointSchema, uuidSchema } from "../../schemas.js";
import type { AuthState } from "../../middleware/auth.js";

const SLUG_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

function randomSlug(): string {
  const bytes = randomBytes(10);
  return `ep-${[...bytes].map((b) => SLUG_ALPHABET[b % SLUG_ALPHABET.length]).join("")}`;
}

export function pathId(value: string | undefined, field: string): string {
  return parseOrThrow(uuidSchema, value, field).toLowerCase();
}

/** Operations 1-4. */
export function endpointRoutes(router: Router, deps: GatewayDeps, options: GatewayOptions): void {
  const { catalog, crypto, bus } = deps;

  router.get("/v1/endpoints", async (ctx) => {
    const { accountId } = ctx.state.auth as AuthState;
    const res = await catalog.listEndpoints({ accountId });
    ctx.body = { items: res.endpoints.map((e) => endpointJson(e, options.ingestPublicUrl)) };
  });

  router.post("/v1/endpoints", async (ctx) => {
    const { accountId } = ctx.state.auth as AuthState;
    const body = parseOrThrow(createEndpointSchema, await readJsonObject(ctx));
    const slug = body.slug ?? randomSlug();
    const sealedSecret = body.secret
      ? (await crypto.sealSecret({ plaintext: Buffer.from(body.secret, "utf8") })).sealed
      : new Uint8Array();
    const res = await catalog.createEndpoint({
      endpoint: create(EndpointSchema, {
        accountId,
        slug,
        displayName: body.displayName ?? slug,
        operatingMode: body.operatingMode ?? "capture",
        status: body.status ?? "active",
        replayFromDashboard: body.replayFromDashboard ?? true,
        replayFromApi: body.replayFromApi ?? true,
        provider: body.provider ?? "generic",
        sealedSecret,
        genericSignatureHeader: body.genericSignatureHeader ?? "",
        genericSignaturePrefix: body.genericSignaturePrefix ?? "",
        source: "api",
      }),
    });
    const endpoint = res.endpoint!;
    bus.publishEndpointChanged(endpoint.id);
    ctx.status = 201;
    ctx.set("Location", `/v1/endpoints/${endpoint.id}`);
    ctx.body = endpointJson(endpoint, options.ingestPublicUrl);
  });

  router.get("/v1/endpoints/:id", async (ctx) => {
    const { accountId } = ctx.state.auth as AuthState;
    const res = await catalog.getEndpoint({ accountId, endpointId: pathId(ctx.params.id, "id") });
    ctx.body = endpointJson(res.endpoint!, options.ingestPublicUrl);
  });

  router.delete("/v1/endpoints/:id", async (ctx) => {
    const { accountId } = ctx.state.auth as AuthState;
    const endpointId = pathId(ctx.params.id, "id");
    await catalog.deleteEndpoint({ accountId, endpointId });
    bus.publishEndpointChanged(endpointId);
    ctx.status = 204;
  });
}
