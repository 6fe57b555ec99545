import type { FieldReason } from "@whc/api-model";

/**
 * The one error type of the domain. `reason` is a stable snake_case word that callers
 * branch on; each edge (the gateway's HTTP table, ingest's answers, Connect) maps reasons
 * to its own status codes. `message` is for logs; clients only see the fixed text of
 * their edge's table, never this message.
 */
export type ErrorReason =
  | "unauthorized"
  | "not_found"
  | "validation_failed"
  | "malformed_json"
  | "unsupported_media_type"
  | "payload_too_large"
  | "method_not_allowed"
  | "slug_taken"
  | "conflict"
  | "replay_disabled"
  | "forbidden"
  | "target_not_allowed"
  | "forward_not_configured"
  | "trigger_unavailable"
  | "signing_unsupported"
  | "replay_limit_exceeded"
  | "quota_exceeded"
  | "egress_capacity_exhausted"
  | "service_unavailable"
  | "timeout"
  | "internal_error";

/** Why a field was refused: the list is the /v1 contract's (`details.reason`). */
export type { FieldReason };

export interface AppErrorOptions {
  field?: string;
  fieldReason?: FieldReason;
  cause?: unknown;
  /** Extra values for the edge that answers (e.g. rate-limit figures); never secrets. */
  meta?: Record<string, string | number>;
}

const brand = Symbol.for("webhook-capture.AppError");

export class AppError extends Error {
  readonly reason: ErrorReason;
  readonly field: string | undefined;
  readonly fieldReason: FieldReason | undefined;
  readonly meta: Record<string, string | number>;
  readonly [brand] = true;

  constructor(reason: ErrorReason, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AppError";
    this.reason = reason;
    this.field = options.field;
    this.fieldReason = options.fieldReason;
    this.meta = options.meta ?? {};
  }

  /** Survives duplicate copies of this module (bundles, test isolation), unlike instanceof. */
  static is(value: unknown): value is AppError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[brand] === true;
  }
}

export function notFound(what = "resource"): AppError {
  return new AppError("not_found", `${what} not found`);
}

export function validationFailed(field: string, fieldReason: FieldReason, message?: string): AppError {
  return new AppError("validation_failed", message ?? `${field}: ${fieldReason}`, { field, fieldReason });
}

export function unavailable(what: string, cause?: unknown): AppError {
  return new AppError("service_unavailable", `${what} unavailable`, { cause });
}
