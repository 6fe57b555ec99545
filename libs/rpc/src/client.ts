import { Code, ConnectError, createClient, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { DescService } from "@bufbuild/protobuf";
import { fromConnectError } from "@whc/errors";
import { currentRequestId } from "@whc/logging";
import { callSignal } from "./deadline.js";
import { REQUEST_ID_HEADER } from "./server.js";
import { tracingClientInterceptor } from "./tracing.js";
import { sendInternalToken, tlsClientOptions, type InternalCredentials } from "./credentials.js";

/**
 * Client side of every internal call: forwards the request id and applies a deadline; a call
 * cut off by that deadline fails with DeadlineExceeded (reason `timeout`), whatever the
 * transport made of the abort.
 */
export function clientInterceptor(timeoutMs: number): Interceptor {
  return (next) => async (req) => {
    const requestId = currentRequestId();
    if (requestId && !req.header.has(REQUEST_ID_HEADER)) req.header.set(REQUEST_ID_HEADER, requestId);
    const call = callSignal(req.signal, timeoutMs);
    try {
      return await next({ ...req, signal: call.signal });
    } catch (err) {
      if (call.timedOut()) throw new ConnectError(`no answer within ${timeoutMs} ms`, Code.DeadlineExceeded);
      throw err;
    } finally {
      call.release();
    }
  };
}

/**
 * One HTTP/2 transport per peer, reused by every client of that peer. `credentials`: the
 * token every call carries and, with `tls`, the certificate it presents over an https: URL
 * (the server's checked against the CA); `undefined` only for peers that ask for none.
 */
export function createPeerTransport(baseUrl: string, timeoutMs: number, credentials: InternalCredentials | undefined): Transport {
  return createGrpcTransport({
    baseUrl,
    interceptors: [
      tracingClientInterceptor(),
      clientInterceptor(timeoutMs),
      ...(credentials ? [sendInternalToken(credentials.token)] : []),
    ],
    ...(credentials?.tls ? { nodeOptions: tlsClientOptions(credentials.tls) } : {}),
    // Internal answers are not compressed: by default a Connect client accepts gzip and the
    // server then gzips every answer over 1 KiB, which here means sealed bodies (random bytes
    // that do not shrink) and event pages, for CPU and latency on both ends and no gain on a
    // LAN. grpc-js clients may still ask for gzip; the servers keep accepting it.
    acceptCompression: [],
    // Keep the session warm so a request after a quiet spell does not pay a handshake.
    pingIntervalMs: 15_000,
    idleConnectionTimeoutMs: 60_000,
  });
}

/**
 * A Connect client whose unary calls fail with the AppError the peer meant (its reason,
 * field and meta), and with `service_unavailable` when the peer cannot be reached, so
 * callers branch on domain reasons and never on transport codes.
 */
export function createServiceClient<S extends DescService>(service: S, transport: Transport): Client<S> {
  const client = createClient(service, transport) as Record<string, unknown>;
  const wrapped: Record<string, unknown> = {};
  for (const [localName, method] of Object.entries(service.method)) {
    const call = client[localName] as (...args: unknown[]) => unknown;
    wrapped[localName] =
      method.methodKind === "unary"
        ? async (...args: unknown[]) => {
            try {
              return await call(...args);
            } catch (err) {
              throw fromConnectError(err);
            }
          }
        : call;
  }
  return wrapped as Client<S>;
}
