import type { ApiKeyRecord } from "./types.js";

/**
 * The key ensureApiKey registers: every scope (`*`), every endpoint, no expiry (bootstrap
 * keys and an account's first key), as every adapter stores it.
 */
export function ensuredApiKey(fields: Pick<ApiKeyRecord, "id" | "accountId" | "accountName" | "name" | "prefix" | "keyHash" | "createdAt">): ApiKeyRecord {
  return { ...fields, scopes: ["*"], endpointIds: [], expiresAt: undefined, lastUsedAt: undefined, revokedAt: undefined };
}
