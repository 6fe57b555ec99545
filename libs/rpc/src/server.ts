import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { connectNodeAdapter, type ConnectNodeAdapterOptions } from "@connectrpc/connect-node";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { ConnectError } from "@connectrpc/connect";
import { toConnectError, AppError } from "@whc/errors";
import { requestContext, type Logger } from "@whc/logging";
import { randomUUID } from "node:crypto";

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
  /** Answers what no RPC route matches, e.g. /healthz. */
  fallback?: ConnectNodeAdapterOptions["fallback"];
}

/** Serves Connect, gRPC and gRPC-web over HTTP/2 cleartext, so grpc-js clients can call too. */
export async function serveH2c(options: ServeOptions): Promise<H2cServer> {
  const handler = connectNodeAdapter({
    routes: options.routes,
    interceptors: [serverInterceptor(options.logger)],
    ...(options.fallback ? { fallback: options.fallback } : {}),
  });
  const server = http2.createServer(handler);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Ask peers to stop opening streams; in-flight ones finish, idle sessions end.
        for (const session of sessions) session.close();
      }),
  };
}
