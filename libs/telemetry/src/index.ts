/**
 * OpenTelemetry tracing for every service: startTracing (once per process, from the standard
 * OTEL_* variables) and the few helpers the instrumentation in rpc, messaging, the catalog
 * store, the gateway and ingest share. Everything is a no-op until startTracing found an
 * endpoint; callers check tracingActive() before doing any tracing work.
 */
export { startTracing, tracesUrl } from "./start.js";
export type { Tracing } from "./start.js";
export { tracingActive } from "./active.js";
export {
  ATTR_WHC_REQUEST_ID,
  TRACER_NAME,
  extractTraceContext,
  failSpan,
  inSpan,
  injectTraceHeaders,
  tracer,
} from "./spans.js";
export { endHttpServerSpan, runInHttpServerSpan } from "./http.js";
export * from "./attributes.js";
