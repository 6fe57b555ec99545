import type { ApiKey } from "@whc/contracts";
import {
  apiKeyList,
  createApiKeyRequest,
  createdApiKey,
  endpointsWithin,
  missingScope,
  type ApiKeyListJson,
  type CreatedApiKeyJson,
} from "@whc/api-model";
import { apiKeyJson } from "@whc/api-model/present";
import { AppError, notFound, validationFailed } from "@whc/errors";
import { generateApiKey, hashApiKey, keyPrefix } from "@whc/identity";
import type { GatewayDeps } from "../../deps.js";
import type { AuthState } from "../../middleware/auth.js";
import { route, type Route } from "../../route.js";
import { forbidden } from "../../scopes.js";
import { auditContext } from "../../audit.js";

/** Whether a key is within the caller's reach: its scopes and endpoints no wider (design §15). */
function withinReach(auth: AuthState, key: Pick<ApiKey, "scopes" | "endpointIds">): boolean {
  return missingScope(auth.scopes, key.scopes) === undefined && endpointsWithin(auth.endpointIds, key.endpointIds);
}

/** The ids of endpoints the key is restricted to, each an endpoint of the account (else validation_failed, `unknown`). */
export async function knownEndpoints(deps: GatewayDeps, accountId: string, ids: readonly string[]): Promise<string[]> {
  const known = new Set<string>();
  for (const [i, id] of ids.entries()) {
    const endpointId = id.toLowerCase();
    if (known.has(endpointId)) continue;
    try {
      await deps.catalog.getEndpoint({ accountId, endpointId });
    } catch (err) {
      if (AppError.is(err) && err.reason === "not_found") throw validationFailed(`endpointIds.${i}`, "unknown");
      throw err;
    }
    known.add(endpointId);
  }
  return [...known];
}

/** `GET`, `POST /v1/keys` and `DELETE /v1/keys/{id}` (design §15; ADR 0050). */
export function keyRoutes(deps: GatewayDeps, now: () => number = Date.now): Route[] {
  const { catalog } = deps;
  return [
    route({
      method: "GET",
      path: "/v1/keys",
      scope: "keys:write",
      operationId: "listKeys",
      summary: "List API keys",
      description:
        "The account's API keys that are within the calling key's reach (no scope and no endpoint beyond its own), oldest " +
        "first, revoked and expired ones included: each one's name, `prefix` (its first characters), scopes, endpoints, " +
        "expiry and when it was last used (to the minute). A key itself is never shown again after its creation.\n\n" +
        "Not paged, and bounded: an account holds at most `WHC_QUOTA_KEYS` (1000) usable keys (neither revoked nor " +
        "expired) besides its bootstrap and first keys, and a key revoked or expired more than `WHC_KEY_RETENTION_DAYS` " +
        "(30) days ago is deleted (it leaves this list; its `key.created` and `key.revoked` audit entries stay).",
      tags: ["keys"],
      extension: true,
      success: { status: 200, schema: apiKeyList, description: "The keys within the caller's reach, oldest first." },
      errors: [],
      async handler(_ctx, { auth }): Promise<ApiKeyListJson> {
        const { keys } = await catalog.listApiKeys({ accountId: auth.accountId });
        return { items: keys.filter((k) => withinReach(auth, k)).map(apiKeyJson) };
      },
    }),
    route({
      method: "POST",
      path: "/v1/keys",
      scope: "keys:write",
      operationId: "createKey",
      summary: "Create an API key",
      description:
        "Creates a key of the account with the `scopes` given, optionally restricted to `endpointIds` and expiring at " +
        "`expiresAt`, and answers it with the key itself in `key`: **shown this once** (only its hash is stored). A key " +
        "creates only keys within its own reach: each scope one it holds (`*` holds every scope), and, when it is " +
        "restricted to endpoints, a non-empty subset of those. `dashboard` makes the dashboard's session: every scope, " +
        "with replays judged by the endpoint's `replayFromDashboard`.\n\n" +
        "Errors: 403 `forbidden` when the key asked for is wider than the caller (`details.field` `scopes`, with " +
        "`details.scope` the scope it lacks, or `endpointIds`); 400 `validation_failed` for an unknown scope, an " +
        "`expiresAt` not in the future (`reason: range`) or an endpoint id the account does not have (`reason: unknown`); " +
        "429 `quota_exceeded` with `details: {\"quota\": \"keys\", \"limit\": N}` (no `Retry-After`) when the account " +
        "already holds `WHC_QUOTA_KEYS` (1000) usable keys, neither revoked nor expired: revoking one frees its place.",
      tags: ["keys"],
      extension: true,
      body: createApiKeyRequest,
      bodyRequired: true,
      success: { status: 201, schema: createdApiKey, description: "Created; `key` is shown this once." },
      errors: [400, 403, 413, 415, 429],
      async handler(ctx, { auth, body }): Promise<CreatedApiKeyJson> {
        const scopes = [...new Set(body.scopes)];
        const lacking = missingScope(auth.scopes, scopes);
        if (lacking) throw forbidden(lacking, "scopes");
        const requestedEndpoints = body.endpointIds ?? [];
        if (!endpointsWithin(auth.endpointIds, requestedEndpoints.map((id) => id.toLowerCase()))) throw forbidden(undefined, "endpointIds");
        const expiresAtMs = body.expiresAt ? Date.parse(body.expiresAt) : undefined;
        if (expiresAtMs !== undefined && expiresAtMs <= now()) throw validationFailed("expiresAt", "range");
        const endpointIds = await knownEndpoints(deps, auth.accountId, requestedEndpoints);
        const key = generateApiKey();
        const res = await catalog.createApiKey({
          accountId: auth.accountId,
          name: body.name,
          keyHash: hashApiKey(key),
          prefix: keyPrefix(key),
          scopes,
          endpointIds,
          ...(expiresAtMs !== undefined ? { expiresAtMs: BigInt(expiresAtMs) } : {}),
          audit: auditContext(ctx, auth),
        });
        return { ...apiKeyJson(res.key!), key };
      },
    }),
    route({
      method: "DELETE",
      path: "/v1/keys/{id}",
      scope: "keys:write",
      operationId: "revokeKey",
      summary: "Revoke an API key",
      description:
        "Revokes the key: from now on it is refused (401), as an unknown key is. A key may revoke itself (signing out) " +
        "and any key within its reach; another account's key, or one wider than the caller, is 404 as an unknown id. " +
        "Revoking a revoked key again is 204 and keeps the first `revokedAt`.",
      tags: ["keys"],
      extension: true,
      success: { status: 204, description: "Revoked." },
      errors: [400],
      async handler(ctx, { auth, params }) {
        const { keys } = await catalog.listApiKeys({ accountId: auth.accountId });
        const target = keys.find((k) => k.id === params.id);
        if (!target || !withinReach(auth, target)) throw notFound("api key");
        await catalog.revokeApiKey({ keyId: target.id, accountId: auth.accountId, audit: auditContext(ctx, auth, { prefix: target.prefix, name: target.name }) });
      },
    }),
  ];
}
