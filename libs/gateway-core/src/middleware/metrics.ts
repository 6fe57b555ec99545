import type { Middleware } from "koa";
import { Counter, Histogram, Registry } from "prom-client";

/**
 * Request counts and latency by route template and status, in Prometheus format; only the
 * whc_http_* series (the process's own are its metrics port's to add).
 */
export function createGatewayMetrics() {
  const registry = new Registry();
  const requests = new Counter({
    name: "whc_http_requests_total",
    help: "HTTP requests answered by the gateway",
    labelNames: ["method", "route", "status"],
    registers: [registry],
  });
  const duration = new Histogram({
    name: "whc_http_request_duration_seconds",
    help: "Time to answer, by route template (long polls included)",
    labelNames: ["method", "route", "status"],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 30, 60],
    registers: [registry],
  });

  const middleware: Middleware = async function metricsMiddleware(ctx, next) {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      // The route template, never the raw path: ids would make every request a new series.
      const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? "unmatched";
      const labels = { method: ctx.method, route: String(route), status: String(ctx.status) };
      requests.inc(labels);
      duration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
    }
  };
  return { registry, middleware };
}
