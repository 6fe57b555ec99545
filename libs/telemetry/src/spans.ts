import {
  context,
  defaultTextMapGetter,
  propagation,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type SpanOptions,
  type TextMapGetter,
  type TextMapSetter,
} from "@opentelemetry/api";
import { ATTR_ERROR_TYPE } from "./attributes.js";

/** The instrumentation scope of every span this repository makes. */
export const TRACER_NAME = "webhook-capture";

/** The request id of the work (X-Request-Id at the gateway, carried into every internal call). */
export const ATTR_WHC_REQUEST_ID = "whc.request_id";

/** Asked per use, not held: a tracer taken before a provider was registered stays a no-op for good. */
export function tracer() {
  return trace.getTracer(TRACER_NAME);
}

/**
 * Marks the span failed with a short error type (a domain reason, a Connect code, or the
 * error's class name), never the message: messages may quote what a sender sent.
 */
export function failSpan(span: Span, err: unknown, type?: string): void {
  const reason = (err as { reason?: unknown } | undefined)?.reason;
  const name = type ?? (typeof reason === "string" ? reason : err instanceof Error ? err.name : "error");
  span.setAttribute(ATTR_ERROR_TYPE, name);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/**
 * Runs `work` inside a new span, current for everything `work` starts; the span ends when its
 * promise settles, failed if it rejects. `parent` defaults to the active context.
 */
export function inSpan<T>(name: string, options: SpanOptions, work: (span: Span) => Promise<T>, parent: Context = context.active()): Promise<T> {
  return tracer().startActiveSpan(name, options, parent, async (span) => {
    try {
      return await work(span);
    } catch (err) {
      failSpan(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

/** Fetch-style headers (Connect's request headers) as a propagation carrier. */
const headersSetter: TextMapSetter<Headers> = { set: (carrier, key, value) => carrier.set(key, value) };
const headersGetter: TextMapGetter<Headers> = {
  get: (carrier, key) => carrier.get(key) ?? undefined,
  keys: (carrier) => [...carrier.keys()],
};

/** Writes `traceparent`/`tracestate` of the active span (or of `ctx`) into the headers. */
export function injectTraceHeaders(headers: Headers, ctx: Context = context.active()): void {
  propagation.inject(ctx, headers, headersSetter);
}

/** The caller's trace context from Fetch-style headers or Node's IncomingHttpHeaders. */
export function extractTraceContext(headers: Headers | Record<string, string | string[] | undefined>): Context {
  if (headers instanceof Headers) return propagation.extract(context.active(), headers, headersGetter);
  return propagation.extract(context.active(), headers, defaultTextMapGetter);
}
