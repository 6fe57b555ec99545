import { context, propagation, trace } from "@opentelemetry/api";
import { createRequire } from "node:module";
import type * as ContextAsyncHooks from "@opentelemetry/context-async-hooks";
import type * as Core from "@opentelemetry/core";
import type * as ExporterOtlpHttp from "@opentelemetry/exporter-trace-otlp-http";
import type * as Resources from "@opentelemetry/resources";
import type * as SdkTrace from "@opentelemetry/sdk-trace";
import { ConfigError } from "@whc/config";
import { setTracingActive } from "./active.js";
import { ATTR_SERVICE_NAME } from "./attributes.js";

export interface Tracing {
  /** Whether spans are recorded and exported (an OTLP endpoint was configured). */
  readonly enabled: boolean;
  /** Where spans go, when enabled. */
  readonly url: string | undefined;
  /** Exports what is buffered, then unregisters: the process's last closeable. */
  close(): Promise<void>;
}

type Env = Record<string, string | undefined>;

const DISABLED: Tracing = { enabled: false, url: undefined, close: async () => {} };

/**
 * The OTLP/HTTP traces URL the standard variables name: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as
 * given, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces (the OpenTelemetry exporter spec).
 * Undefined when neither is set, or OTEL_SDK_DISABLED / OTEL_TRACES_EXPORTER=none say not to.
 */
export function tracesUrl(env: Env): string | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return undefined;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === "none") return undefined;
  const signal = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (signal) return checkedUrl("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", signal);
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!base) return undefined;
  return checkedUrl("OTEL_EXPORTER_OTLP_ENDPOINT", `${base.replace(/\/+$/, "")}/v1/traces`);
}

function checkedUrl(variable: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(variable, "must be an http(s) URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new ConfigError(variable, "must be an http(s) URL");
  return url.toString();
}

/** A whole number of milliseconds or items from OTEL_BSP_*; unset leaves the SDK's default. */
function positiveInt(env: Env, variable: string): number | undefined {
  const raw = env[variable]?.trim();
  if (!raw) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new ConfigError(variable, "must be a positive whole number");
  return n;
}

/**
 * Turns tracing on for this process when an OTLP endpoint is configured (the standard OTEL_*
 * variables, read from `env`, not WHC_ ones): a tracer provider batching spans to the
 * OTLP/HTTP JSON exporter, W3C trace context propagation, and the AsyncLocalStorage context
 * manager so a span follows its work across awaits. `service` names the resource unless
 * OTEL_SERVICE_NAME does; OTEL_RESOURCE_ATTRIBUTES adds to it.
 *
 * Without an endpoint it registers nothing: the API's no-op tracer stays in place and the
 * instrumentation of this repository checks `tracingActive()` first, so it costs nothing.
 * Call once, first thing in a main, before any transport or server is built.
 */
export function startTracing(service: string, env: Env): Tracing {
  const url = tracesUrl(env);
  if (!url) return DISABLED;
  // The SDK is loaded only now: loaded always, it cost every process about 8 MiB of resident
  // memory with tracing off. Its CommonJS build shares the API's global registry with the
  // API module imported above, so the provider registered here is the one spans use.
  const load = createRequire(import.meta.url);
  const { AsyncLocalStorageContextManager } = load("@opentelemetry/context-async-hooks") as typeof ContextAsyncHooks;
  const { W3CTraceContextPropagator, parseKeyPairsIntoRecord } = load("@opentelemetry/core") as typeof Core;
  const { OTLPTraceExporter } = load("@opentelemetry/exporter-trace-otlp-http") as typeof ExporterOtlpHttp;
  const { resourceFromAttributes } = load("@opentelemetry/resources") as typeof Resources;
  const { BatchSpanProcessor, TracerProvider } = load("@opentelemetry/sdk-trace") as typeof SdkTrace;
  const scheduledDelayMillis = positiveInt(env, "OTEL_BSP_SCHEDULE_DELAY");
  const maxQueueSize = positiveInt(env, "OTEL_BSP_MAX_QUEUE_SIZE");
  const maxExportBatchSize = positiveInt(env, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE");
  const exportTimeoutMillis = positiveInt(env, "OTEL_BSP_EXPORT_TIMEOUT");
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      ...parseKeyPairsIntoRecord(env.OTEL_RESOURCE_ATTRIBUTES),
      [ATTR_SERVICE_NAME]: env.OTEL_SERVICE_NAME?.trim() || service,
    }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({ url }),
        ...(scheduledDelayMillis ? { scheduledDelayMillis } : {}),
        ...(maxQueueSize ? { maxQueueSize } : {}),
        ...(maxExportBatchSize ? { maxExportBatchSize } : {}),
        ...(exportTimeoutMillis ? { exportTimeoutMillis } : {}),
      }),
    ],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  setTracingActive(true);
  let closed: Promise<void> | undefined;
  return {
    enabled: true,
    url,
    close: () =>
      (closed ??= (async () => {
        try {
          await provider.shutdown();
        } finally {
          setTracingActive(false);
          trace.disable();
          propagation.disable();
          context.disable();
        }
      })()),
  };
}
