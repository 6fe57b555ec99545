import { create, isMessage, type DescMessage, type DescMethod, type DescMethodUnary } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextValues,
  createMethodImplSpec,
  createRouterTransport,
  createServiceImplSpec,
  type ConnectRouter,
  type HandlerContext,
  type Interceptor,
  type MethodImplSpec,
  type Transport,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import type { Logger } from "@whc/logging";
import { serverInterceptor } from "./server.js";
import { clientInterceptor } from "./client.js";
import { callSignal } from "./deadline.js";
import { tracingClientInterceptor, tracingServerInterceptor } from "./tracing.js";

type UnaryFn = (req: UnaryRequest) => Promise<UnaryResponse>;
type UnarySpec = Extract<MethodImplSpec, { kind: "unary" }>;

const methodKey = (method: DescMethod) => `${method.parent.typeName}/${method.name}`;

/** Rejects when the caller's signal fires (its deadline or its cancellation), as a socket call would. */
function untilAborted(signal: AbortSignal, work: Promise<UnaryResponse>): Promise<UnaryResponse> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      const timedOut = (signal.reason as { name?: string } | undefined)?.name === "TimeoutError";
      reject(new ConnectError(timedOut ? "the call timed out" : "the call was cancelled", timedOut ? Code.DeadlineExceeded : Code.Canceled));
    };
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

function chain(interceptors: Interceptor[], last: UnaryFn): UnaryFn {
  return interceptors.reduceRight<UnaryFn>((next, interceptor) => interceptor(next as never) as UnaryFn, last);
}

/**
 * The all-in-one wiring: the same services and the same interceptors on both ends (request
 * ids, deadlines, error mapping), but a unary call hands its message objects straight to the
 * implementation instead of encoding and decoding them, which was a quarter of the capture
 * path's CPU. Streaming calls go through Connect's router transport, bytes and all.
 */
export function createInMemoryTransport(
  routes: (router: ConnectRouter) => void,
  logger: Logger,
  timeoutMs: number,
): Transport {
  const unary = new Map<string, UnarySpec>();
  const record = (spec: MethodImplSpec) => {
    if (spec.kind === "unary") unary.set(methodKey(spec.method), spec as UnarySpec);
  };
  const streaming = createRouterTransport(
    (router) => {
      const recording: ConnectRouter = {
        get handlers() {
          return router.handlers;
        },
        service(service, implementation, options) {
          Object.values(createServiceImplSpec(service, implementation).methods).forEach(record);
          router.service(service, implementation, options);
          return recording;
        },
        rpc(method, impl, options) {
          record(createMethodImplSpec(method, impl));
          router.rpc(method, impl, options);
          return recording;
        },
      };
      routes(recording);
    },
    {
      router: { interceptors: [tracingServerInterceptor(), serverInterceptor(logger)] },
      transport: { interceptors: [tracingClientInterceptor(), clientInterceptor(timeoutMs)] },
    },
  );

  const invoke: UnaryFn = async (req) => {
    const spec = unary.get(methodKey(req.method));
    if (!spec) throw new ConnectError(`${req.method.parent.typeName}.${req.method.name} is not implemented`, Code.Unimplemented);
    // Not createHandlerContext: it links two more abort controllers (its deadline's and its own)
    // to the call's signal and copies the headers, about 20 µs a call (docs/performance.md, "The
    // in-process call"). The call's signal already ends at its deadline or its caller's
    // cancellation; the handler gets it as it is.
    const context: HandlerContext = {
      service: req.service,
      method: req.method,
      protocolName: "in-memory",
      requestMethod: req.requestMethod,
      url: req.url,
      requestHeader: req.header,
      responseHeader: new Headers(),
      responseTrailer: new Headers(),
      signal: req.signal,
      // The deadline is the client interceptor's; nothing here reads what is left of it.
      timeoutMs: () => undefined,
      values: req.contextValues,
    };
    const output = await spec.impl(req.message, context);
    const message = isMessage(output, req.method.output) ? output : create(req.method.output, output);
    return {
      stream: false,
      service: req.service,
      method: req.method,
      header: context.responseHeader,
      trailer: context.responseTrailer,
      message,
    } as UnaryResponse;
  };
  const server = chain([tracingServerInterceptor(), serverInterceptor(logger)], invoke);
  const call = chain([tracingClientInterceptor(), clientInterceptor(timeoutMs)], (req) => untilAborted(req.signal, server(req)));

  return {
    async unary<I extends DescMessage, O extends DescMessage>(
      method: DescMethodUnary<I, O>,
      signal: AbortSignal | undefined,
      callTimeoutMs: number | undefined,
      header: Parameters<Transport["unary"]>[3],
      input: Parameters<Transport["unary"]>[4],
      contextValues?: Parameters<Transport["unary"]>[5],
    ): Promise<UnaryResponse<I, O>> {
      // With neither a caller's signal nor a deadline of its own to link, the call needs no
      // controller here: the client interceptor makes the one that ends it.
      const own = signal === undefined && callTimeoutMs === undefined ? undefined : callSignal(signal, callTimeoutMs);
      const request: UnaryRequest = {
        stream: false,
        service: method.parent,
        method: method as DescMethodUnary,
        requestMethod: "POST",
        url: `in-memory://${method.parent.typeName}/${method.name}`,
        // Undefined only until the client interceptor replaces it (the tracing one before it
        // does not read it).
        signal: own?.signal as AbortSignal,
        header: new Headers(header),
        contextValues: contextValues ?? createContextValues(),
        message: isMessage(input, method.input) ? input : create(method.input, input as never),
      };
      try {
        return (await call(request)) as UnaryResponse<I, O>;
      } catch (err) {
        throw ConnectError.from(err);
      } finally {
        own?.release();
      }
    },
    stream: (...args) => streaming.stream(...args),
  };
}
