import { z } from "zod";
import { dateTime, extension, uuid } from "./common.js";
import { SCOPES } from "./values.js";
import type { Scope } from "./values.js";

/**
 * The scopes a key holds implicitly: `*` holds every scope, and `dashboard`, the dashboard's
 * session, does everything the dashboard does, which is everything (ADR 0050).
 */
const HOLDS_EVERY_SCOPE: readonly string[] = ["*", "dashboard"];

export const KEY_LIMITS = {
  nameLength: 100,
  /** Endpoints one key may be restricted to. */
  endpointIds: 100,
  scopes: SCOPES.length,
} as const;

/** Whether a key with `held` scopes may do what `needed` allows. */
export function scopeAllows(held: readonly string[], needed: Scope): boolean {
  return held.includes(needed) || held.some((s) => HOLDS_EVERY_SCOPE.includes(s));
}

/**
 * Whether a key is the dashboard's session: only a key whose own scopes name `dashboard`
 * (not `*`, which may create one) has its replays judged by `replayFromDashboard` (design §14).
 */
export function isDashboardSession(scopes: readonly string[]): boolean {
  return scopes.includes("dashboard");
}

/** The first of `requested` that a key holding `held` lacks; undefined when it holds them all. */
export function missingScope(held: readonly string[], requested: readonly string[]): Scope | undefined {
  return requested.find((s) => !scopeAllows(held, s as Scope)) as Scope | undefined;
}

/**
 * Whether a key restricted to `held` endpoints (none: every endpoint of the account) reaches
 * every endpoint of `requested` (none: every endpoint).
 */
export function endpointsWithin(held: readonly string[], requested: readonly string[]): boolean {
  if (held.length === 0) return true;
  return requested.length > 0 && requested.every((id) => held.includes(id));
}

/** Whether a key restricted to `endpointIds` (none: every endpoint) sees this endpoint. */
export function seesEndpoint(endpointIds: readonly string[], endpointId: string): boolean {
  return endpointIds.length === 0 || endpointIds.includes(endpointId.toLowerCase());
}

/** A key as `GET /v1/keys` shows it: never the key itself, only its first characters. */
export const apiKeyView = z
  .object({
    id: uuid,
    name: z.string(),
    prefix: z.string().describe("The key's first 10 characters (`whc_` and 6 more), to recognise it; never enough to use it."),
    scopes: z.array(z.enum(SCOPES)),
    endpointIds: z.array(uuid).describe("The only endpoints the key sees; empty: every endpoint of the account."),
    createdAt: dateTime,
    expiresAt: dateTime.nullable().describe("From then on the key is refused (401); null: never."),
    lastUsedAt: dateTime
      .nullable()
      .describe("When the key was last accepted, to the minute (the gateway records it at most once a minute per key); null: never used."),
    revokedAt: dateTime.nullable().describe("When it was revoked; a revoked key is refused (401)."),
  })
  .meta({ ...extension });
export type ApiKeyJson = z.infer<typeof apiKeyView>;

export const apiKeyList = z.object({ items: z.array(apiKeyView) }).meta({ ...extension });
export type ApiKeyListJson = z.infer<typeof apiKeyList>;

/** `POST /v1/keys`'s body. */
export const createApiKeyRequest = z
  .strictObject({
    name: z.string().min(1).max(KEY_LIMITS.nameLength).describe("What the key is for, for people (`ci-read-events`)."),
    scopes: z
      .array(z.enum(SCOPES))
      .min(1)
      .max(KEY_LIMITS.scopes)
      .describe("What the key may do; each must be one the creating key holds."),
    endpointIds: z
      .array(uuid)
      .max(KEY_LIMITS.endpointIds)
      .optional()
      .describe("Restricts the key to these endpoints of the account; absent or empty: every endpoint (only for a creating key that is not restricted itself)."),
    expiresAt: dateTime.nullable().optional().describe("When the key stops working (in the future); absent or null: never."),
  })
  .meta({ ...extension });
export type CreateApiKeyRequest = z.input<typeof createApiKeyRequest>;

/** `POST /v1/keys`'s answer: the key as listed, and the key itself, shown this once. */
export const createdApiKey = apiKeyView
  .extend({ key: z.string().describe("The key: `whc_` and 40 letters and digits. Shown this once; only its hash is stored.") })
  .meta({ ...extension });
export type CreatedApiKeyJson = z.infer<typeof createdApiKey>;
