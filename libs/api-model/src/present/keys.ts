import type { ApiKey } from "@whc/contracts";
import type { ApiKeyJson, Scope } from "../index.js";
import { isoTime } from "./json.js";

const timeOrNull = (ms: bigint | undefined) => (ms === undefined ? null : isoTime(ms));

/** A key as the catalog keeps it, as `GET /v1/keys` shows it: never its hash. */
export function apiKeyJson(k: ApiKey): ApiKeyJson {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    scopes: k.scopes as Scope[],
    endpointIds: k.endpointIds,
    createdAt: isoTime(k.createdAtMs),
    expiresAt: timeOrNull(k.expiresAtMs),
    lastUsedAt: timeOrNull(k.lastUsedAtMs),
    revokedAt: timeOrNull(k.revokedAtMs),
  };
}
