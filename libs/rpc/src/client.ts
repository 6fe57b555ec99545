import { createClient, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { DescService } from "@bufbuild/protobuf";
import { fromConnectError } from "@whc/errors";
import { currentRequestId } from "@whc/logging";
import { REQUEST_ID_HEADER } from "./server.js";

/**
 * Client side of every internal call: forwards the request id, applies a deadline, and
 * turns a failed call back into the AppError the peer meant (unreachable peers become
 * `service_unavailable`).
 */
export function clientInterceptor(timeoutMs: number): Interceptor {
  return (next) => async (req) => {
    const requestId = currentRequestId();
    if (requestId && !req.header.has(REQUEST_ID_HEADER)) req.header.set(REQUEST_ID_HEADER, requestId);
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = AbortSignal.any([req.signal, timeout]);
    try {
      return await next({ ...req, signal });
    } catch (err) {
      throw fromConnectError(err);
    }
  };
}

/** One HTTP/2 transport per peer, reused by every client of that peer. */
export function createPeerTransport(baseUrl: string, timeoutMs: number): Transport {
  return createGrpcTransport({
    baseUrl,
    interceptors: [clientInterceptor(timeoutMs)],
    // Keep the session warm so a request after a quiet spell does not pay a handshake.
    pingIntervalMs: 15_000,
    idleConnectionTimeoutMs: 60_000,
  });
}

export function createServiceClient<S extends DescService>(service: S, transport: Transport): Client<S> {
  return createClient(service, transport);
}
