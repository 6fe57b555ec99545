import { AsyncLocalStorage } from "node:async_hooks";
import { pino, type Logger, type LevelWithSilent, type DestinationStream } from "pino";
import { trace } from "@opentelemetry/api";

export type { Logger } from "pino";

export interface RequestContext {
  requestId: string;
}

/** The request id of the work in progress, carried across awaits and into internal calls. */
export const requestContext = new AsyncLocalStorage<RequestContext>();

export function currentRequestId(): string | undefined {
  return requestContext.getStore()?.requestId;
}

/**
 * Paths that must never reach a log line, whatever a caller passes in. Bodies, secrets and
 * keys are not logged anywhere on purpose; this is the second line of defence.
 */
const redactPaths = [
  "authorization",
  "*.authorization",
  "headers.authorization",
  "req.headers.authorization",
  "req.headers.cookie",
  "secret",
  "*.secret",
  "target_secret",
  "*.target_secret",
  "apiKey",
  "*.apiKey",
  "body",
  "*.body",
];

/**
 * What every line carries of the work in progress: its request id, and the trace and span ids
 * when a span is active (tracing on), so a log line leads to its trace and back.
 */
function logContext(): Record<string, string> {
  const requestId = currentRequestId();
  const ids = trace.getActiveSpan()?.spanContext();
  if (!ids || !trace.isSpanContextValid(ids)) return requestId ? { requestId } : {};
  const { traceId, spanId } = ids;
  return requestId ? { requestId, trace_id: traceId, span_id: spanId } : { trace_id: traceId, span_id: spanId };
}

export function createLogger(
  service: string,
  level: LevelWithSilent = "info",
  destination?: DestinationStream,
): Logger {
  return pino(
    {
      level,
      base: { service },
      redact: { paths: redactPaths, censor: "[REDACTED]" },
      timestamp: pino.stdTimeFunctions.isoTime,
      mixin: logContext,
    },
    destination,
  );
}
