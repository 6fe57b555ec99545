import type { IncomingMessage, ServerResponse } from "node:http";
import { context, SpanKind, trace, type Span } from "@opentelemetry/api";
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_URL_PATH,
} from "./attributes.js";
import { extractTraceContext, failSpan, tracer } from "./spans.js";

/** The path alone: a query may carry a sender's token, and never goes into a span. */
function pathOf(url: string | undefined): string {
  return (url ?? "/").split("?", 1)[0] as string;
}

/** Ends an HTTP server span with its answer: status code, and failed on 5xx (OpenTelemetry's HTTP conventions). */
export function endHttpServerSpan(span: Span, status: number): void {
  span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
  if (status >= 500) failSpan(span, undefined, String(status));
  span.end();
}

/**
 * Runs a node:http request's handling inside a server span continuing the caller's
 * `traceparent`. The request and response emitters are bound to the span's context, so
 * callback-style handlers (body `data`/`end` listeners, `close`) stay in the trace; the span
 * ends when the response closes, with its status. `route` is the route template.
 */
export function runInHttpServerSpan(req: IncomingMessage, res: ServerResponse, route: string, handle: () => void): void {
  const parent = extractTraceContext(req.headers);
  const method = req.method ?? "GET";
  const span = tracer().startSpan(
    `${method} ${route}`,
    {
      kind: SpanKind.SERVER,
      attributes: { [ATTR_HTTP_REQUEST_METHOD]: method, [ATTR_HTTP_ROUTE]: route, [ATTR_URL_PATH]: pathOf(req.url) },
    },
    parent,
  );
  const ctx = trace.setSpan(parent, span);
  context.bind(ctx, req);
  context.bind(ctx, res);
  res.once("close", () => endHttpServerSpan(span, res.statusCode));
  context.with(ctx, handle);
}
