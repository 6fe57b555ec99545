import { AppError } from "@whc/errors";

/**
 * The refusal of a create past the account's endpoint quota. The meta travels to the gateway,
 * which answers 429 `quota_exceeded` with `details: {quota: "endpoints", limit}`.
 */
export function endpointQuotaExceeded(limit: number): AppError {
  return new AppError("quota_exceeded", "endpoint quota of the account reached", { meta: { quota: "endpoints", limit } });
}

/**
 * The refusal of a key past the account's quota of usable keys (ADR 0054): 429
 * `quota_exceeded` with `details: {quota: "keys", limit}`, as for endpoints.
 */
export function keyQuotaExceeded(limit: number): AppError {
  return new AppError("quota_exceeded", "key quota of the account reached", { meta: { quota: "keys", limit } });
}
