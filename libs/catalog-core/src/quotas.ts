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

/**
 * A bulk redelivery past the account's running jobs (ADR 0089): 429 `quota_exceeded` with
 * `details: {quota: "redelivery_jobs", limit}`; one ends (or is canceled), then another starts.
 */
export function redeliveryJobsExceeded(limit: number): AppError {
  return new AppError("quota_exceeded", "running redelivery jobs of the account at their limit", { meta: { quota: "redelivery_jobs", limit } });
}

/** A bulk redelivery whose filter takes more deliveries than a job may redo: `{quota: "redelivery_deliveries", limit}`. */
export function redeliveryTooLarge(limit: number): AppError {
  return new AppError("quota_exceeded", "the filter takes more deliveries than one redelivery job may redo", { meta: { quota: "redelivery_deliveries", limit } });
}
