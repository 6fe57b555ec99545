import type { Middleware } from "koa";
import { SpanKind, context, trace } from "@opentelemetry/api";
import { ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_ROUTE, ATTR_URL_PATH, ATTR_WHC_REQUEST_ID, endHttpServerSpan, extractTraceContext, tracer, tracingActive } from "@whc/telemetry";

/**
 * A server span per request, continuing the caller's W3C `traceparent`: named by method and
 * route template once routing has matched (`GET /v1/endpoints/:id`), with the request id and
 * the status answered. After the request id (it is an attribute), before the access log and
 * the error handler (their lines carry the trace id; the status is the one finally sent).
 */
export function tracing(): Middleware {
  return async function tracingMiddleware(ctx, next) {
    if (!tracingActive()) return next();
    const parent = extractTraceContext(ctx.req.headers);
    const span = tracer().startSpan(
      ctx.method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          [ATTR_HTTP_REQUEST_METHOD]: ctx.method,
          [ATTR_URL_PATH]: ctx.path,
          [ATTR_WHC_REQUEST_ID]: String(ctx.state.requestId ?? ""),
        },
      },
      parent,
    );
    try {
      await context.with(trace.setSpan(parent, span), next);
    } finally {
      const route = (ctx as { _matchedRoute?: string })._matchedRoute;
      if (route) {
        span.setAttribute(ATTR_HTTP_ROUTE, String(route));
        span.updateName(`${ctx.method} ${String(route)}`);
      }
      endHttpServerSpan(span, ctx.status);
    }
  };
}
