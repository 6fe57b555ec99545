import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { DescMethod } from "@bufbuild/protobuf";
import { SpanKind, context, trace, type Span } from "@opentelemetry/api";
import { currentRequestId } from "@whc/logging";
import { ATTR_RPC_METHOD, ATTR_RPC_STATUS_CODE, ATTR_RPC_SYSTEM_NAME, ATTR_WHC_REQUEST_ID, extractTraceContext, failSpan, injectTraceHeaders, tracer, tracingActive } from "@whc/telemetry";
import { REQUEST_ID_HEADER } from "./server.js";

/** `rpc.system.name` of Connect (incubating in semantic-conventions 1.45, so written here). */
const CONNECT_RPC = "connectrpc";

/** `webhookcapture.catalog.v1.CatalogService/AppendEvents`: span name and `rpc.method` alike. */
function fullMethodName(method: DescMethod): string {
  return `${method.parent.typeName}/${method.name}`;
}

/** The Connect code of a failed call as `rpc.status_code` and `error.type` (`not_found`, `deadline_exceeded`...). */
function failRpcSpan(span: Span, err: unknown): void {
  const code = Code[ConnectError.from(err).code] ?? "unknown";
  const name = code.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
  span.setAttribute(ATTR_RPC_STATUS_CODE, name);
  failSpan(span, err, name);
}

function runInRpcSpan<T>(span: Span, parent: ReturnType<typeof context.active>, call: () => Promise<T>): Promise<T> {
  return context.with(trace.setSpan(parent, span), async () => {
    try {
      return await call();
    } catch (err) {
      failRpcSpan(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

/**
 * Client side: a client span per call, its `traceparent` in the request headers, so the peer's
 * server span continues the caller's trace. A streaming call's span covers its start only.
 */
export function tracingClientInterceptor(): Interceptor {
  return (next) => (req) => {
    if (!tracingActive()) return next(req);
    const name = fullMethodName(req.method);
    const requestId = currentRequestId();
    const parent = context.active();
    const span = tracer().startSpan(
      name,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          [ATTR_RPC_SYSTEM_NAME]: CONNECT_RPC,
          [ATTR_RPC_METHOD]: name,
          ...(requestId ? { [ATTR_WHC_REQUEST_ID]: requestId } : {}),
        },
      },
      parent,
    );
    injectTraceHeaders(req.header, trace.setSpan(parent, span));
    return runInRpcSpan(span, parent, () => next(req));
  };
}

/**
 * Server side: a server span per call, continuing the caller's `traceparent` when it sent one
 * (a grpc-js or curl caller without one starts a new trace), with the caller's request id.
 */
export function tracingServerInterceptor(): Interceptor {
  return (next) => (req) => {
    if (!tracingActive()) return next(req);
    const name = fullMethodName(req.method);
    const requestId = req.header.get(REQUEST_ID_HEADER);
    const parent = extractTraceContext(req.header);
    const span = tracer().startSpan(
      name,
      {
        kind: SpanKind.SERVER,
        attributes: {
          [ATTR_RPC_SYSTEM_NAME]: CONNECT_RPC,
          [ATTR_RPC_METHOD]: name,
          ...(requestId ? { [ATTR_WHC_REQUEST_ID]: requestId } : {}),
        },
      },
      parent,
    );
    return runInRpcSpan(span, parent, () => next(req));
  };
}
