import type { IncomingMessage, ServerResponse } from "node:http";
import { context, trace, type Context } from "@opentelemetry/api";
import { ATTR_DB_OPERATION_BATCH_SIZE, inSpan, runInHttpServerSpan, tracingActive } from "@whc/telemetry";

type IngestHandler = (req: IncomingMessage, res: ServerResponse, expectsContinue?: boolean) => void;

/** The route template of every capture: one span name however many endpoints. */
export const CAPTURE_ROUTE = "/h/{endpointId}";

/**
 * A server span per capture (requests to /h/...; health and metrics are not traced),
 * continuing the sender's W3C `traceparent`: the endpoint lookup, the body, the group commit
 * and the answer all run in it. The span ends when the answer has gone out.
 */
export function traceCaptures(handle: IngestHandler): IngestHandler {
  return function tracedCapture(req, res, expectsContinue = false) {
    if (!tracingActive() || !req.url?.startsWith("/h/")) return handle(req, res, expectsContinue);
    runInHttpServerSpan(req, res, CAPTURE_ROUTE, () => handle(req, res, expectsContinue));
  };
}

/**
 * The trace context a queued capture waits in, when tracing is on: its batch's commit and its
 * own answer run in it again (the group commit crosses captures, and the batch is sent from
 * whichever turn of the event loop comes next).
 */
export function waitingContext(): Context | undefined {
  return tracingActive() ? context.active() : undefined;
}

/** `done` called back in the capture's own trace context. */
export function inContext<A extends unknown[]>(ctx: Context | undefined, done: (...args: A) => void): (...args: A) => void {
  if (!ctx) return done;
  return (...args: A) => context.with(ctx, () => done(...args));
}

/**
 * One AppendEvents call for several captures: an `ingest append batch` span in the first
 * capture's trace, linked to every capture's span, so each capture's trace leads to the
 * commit that stored it (and the catalog's spans below it).
 */
export function inBatchSpan<T>(contexts: (Context | undefined)[], call: () => Promise<T>): Promise<T> {
  const first = contexts[0];
  if (!first) return call();
  const links = contexts.flatMap((ctx) => {
    const spanContext = ctx && trace.getSpanContext(ctx);
    return spanContext ? [{ context: spanContext }] : [];
  });
  return inSpan("ingest append batch", { links, attributes: { [ATTR_DB_OPERATION_BATCH_SIZE]: contexts.length } }, call, first);
}
