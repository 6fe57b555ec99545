import type { Middleware } from "koa";
import type { Logger } from "@whc/logging";

/**
 * One line per request: method, route path (never the query string, which may hold search
 * words from bodies), status and duration. The request id comes from the logging context.
 */
export function accessLog(logger: Logger): Middleware {
  return async function accessLogMiddleware(ctx, next) {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      logger.info(
        { method: ctx.method, path: ctx.path, status: ctx.status, durationMs: Math.round(durationMs * 100) / 100 },
        "request",
      );
    }
  };
}
