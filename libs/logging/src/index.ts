import { AsyncLocalStorage } from "node:async_hooks";
import { pino, type Logger, type LevelWithSilent, type DestinationStream } from "pino";

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
      mixin() {
        const requestId = currentRequestId();
        return requestId ? { requestId } : {};
      },
    },
    destination,
  );
}
