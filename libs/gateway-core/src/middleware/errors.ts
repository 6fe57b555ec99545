import type { Middleware, Context } from "koa";
import { AppError } from "@whc/errors";
import type { Logger } from "@whc/logging";
import { errorTable } from "../errors-table.js";

export interface ErrorReply {
  error: string;
  message: string;
  details: Record<string, unknown>;
  requestId: string;
}

/**
 * A spent quota (docs/api.md, "Quotas"): `details.quota` names it and, for the endpoint and
 * `wait` quotas, `details.limit` gives its size; the API rate carries its figures in the
 * RateLimit-* headers instead. Meta values may arrive as text from another process.
 */
function writeQuota(ctx: Context, err: AppError, details: Record<string, unknown>): void {
  const { quota, limit, retryAfter } = err.meta;
  details.quota = String(quota ?? "");
  if (quota === "api_rate") {
    ctx.set("RateLimit-Limit", String(limit ?? 0));
    ctx.set("RateLimit-Remaining", "0");
    ctx.set("RateLimit-Reset", String(err.meta.reset ?? retryAfter ?? 1));
  } else if (limit !== undefined) {
    details.limit = Number(limit);
  }
  if (retryAfter !== undefined) ctx.set("Retry-After", String(retryAfter));
}

/** Writes the one error reply shape; also used outside the chain (e.g. 404 fall-through). */
export function writeError(ctx: Context, err: AppError): void {
  const entry = errorTable[err.reason] ?? errorTable.internal_error;
  const details: Record<string, unknown> = {};
  if (err.reason === "validation_failed") {
    if (err.field) details.field = err.field;
    if (err.fieldReason) details.reason = err.fieldReason;
    if (err.meta.allowed !== undefined) details.allowed = String(err.meta.allowed).split("\n");
  }
  if (err.reason === "trigger_unavailable") {
    details.cause = err.meta.cause;
    if (err.meta.status !== undefined) details.status = Number(err.meta.status);
  }
  if (err.reason === "quota_exceeded") writeQuota(ctx, err, details);
  if (err.reason === "target_not_allowed" && err.meta.reason !== undefined) details.reason = String(err.meta.reason);
  if (err.reason === "conflict" && err.field) details.field = err.field;
  if (err.reason === "forbidden") {
    if (err.meta.scope !== undefined) details.scope = String(err.meta.scope);
    if (err.field) details.field = err.field;
  }
  const body: ErrorReply = { error: entry.code, message: entry.message, details, requestId: ctx.state.requestId as string };
  ctx.status = entry.status;
  ctx.body = body;
  ctx.type = "application/json";
  if (err.reason === "unauthorized") ctx.set("WWW-Authenticate", 'Bearer realm="webhook-capture"');
  if (err.reason === "service_unavailable" || err.reason === "timeout") ctx.set("Retry-After", "5");
  if (err.reason === "egress_capacity_exhausted") ctx.set("Retry-After", "1");
  if (err.reason === "method_not_allowed" && err.meta.allow) ctx.set("Allow", String(err.meta.allow));
  if (err.reason === "replay_limit_exceeded") {
    const reset = String(err.meta.reset ?? 0);
    ctx.set("Retry-After", reset);
    ctx.set("RateLimit-Limit", String(err.meta.limit ?? 0));
    ctx.set("RateLimit-Remaining", "0");
    ctx.set("RateLimit-Reset", reset);
  }
}

/**
 * First in the chain: every failure becomes the error reply of docs/design.md §3. Only the
 * table's fixed text reaches the client; anything unexpected is logged and answered as a
 * bare internal_error.
 */
export function errorHandler(logger: Logger): Middleware {
  return async function errorMiddleware(ctx, next) {
    try {
      await next();
    } catch (err) {
      if (AppError.is(err)) {
        if (err.reason === "internal_error") logger.error({ err }, "internal error");
        else if (err.reason === "service_unavailable" || err.reason === "timeout") {
          logger.warn({ reason: err.reason, detail: err.message }, "dependency unavailable");
        }
        writeError(ctx, err);
        return;
      }
      logger.error({ err }, "unhandled error");
      writeError(ctx, new AppError("internal_error", "unhandled"));
    }
  };
}
