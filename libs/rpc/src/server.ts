import { connectNodeAdapter, type ConnectNodeAdapterOptions } from "@connectrpc/connect-node";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { ConnectError } from "@connectrpc/connect";
import { toConnectError, AppError } from "@whc/errors";
import { requestContext, type Logger } from "@whc/logging";
import { randomUUID } from "node:crypto";
import { listenCleartext } from "./cleartext-listener.js";
import { listenTls } from "./tls-listener.js";
import { requireInternalToken, type InternalCredentials } from "./credentials.js";
import { tracingServerInterceptor } from "./tracing.js";

export const REQUEST_ID_HEADER = "x-request-id";

/**
 * Server side of every internal call: runs the handler inside the caller's request context
 * and turns thrown errors into ConnectErrors carrying the domain reason. Unexpected errors
 * are logged here and reach the peer as a bare `internal`.
 */
export function serverInterceptor(logger: Logger): Interceptor {
  return (next) => async (req) => {
    const requestId = req.header.get(REQUEST_ID_HEADER) ?? randomUUID();
    return requestContext.run({ requestId }, async () => {
      try {
        return await next(req);
      } catch (err) {
        if (!AppError.is(err) && !(err instanceof ConnectError)) {
          logger.error({ err, method: req.method.name }, "rpc handler failed");
        }
        throw toConnectError(err);
      }
    });
  };
}

export interface H2cServer {
  readonly port: number;
  close(): Promise<void>;
}

export interface ServeOptions {
  routes: (router: ConnectRouter) => void;
  port: number;
  host: string;
  logger: Logger;
  /**
   * What every call but a health check must carry (the token; with `tls`, the port speaks
   * HTTP/2 over TLS only and wants a client certificate). `undefined`, said out loud: anyone
   * who reaches the port may call (tests of the plumbing itself).
   */
  credentials: InternalCredentials | undefined;
  /** Answers what no RPC route matches, e.g. /healthz. */
  fallback?: ConnectNodeAdapterOptions["fallback"];
}

/**
 * Serves Connect, gRPC and gRPC-web over HTTP/2, so grpc-js clients can call too: cleartext
 * (h2c), with the same routes and fallback over HTTP/1.1 on the same port (curl speaks only
 * that; Connect's adapter takes all three protocols there but refuses bidi streams, 505), or
 * over mutual TLS. The token is checked first, before a span or a request context is made
 * for a caller who has none.
 */
export async function serveH2c(options: ServeOptions): Promise<H2cServer> {
  const { credentials } = options;
  const handler = connectNodeAdapter({
    routes: options.routes,
    interceptors: [
      ...(credentials ? [requireInternalToken(credentials.token)] : []),
      tracingServerInterceptor(),
      serverInterceptor(options.logger),
    ],
    ...(options.fallback ? { fallback: options.fallback } : {}),
  });
  if (credentials?.tls) return listenTls(handler, options.port, options.host, credentials.tls);
  return listenCleartext(handler, options.port, options.host);
}
