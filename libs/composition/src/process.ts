import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { ConfigError } from "@whc/config";
import type { Logger } from "@whc/logging";

export interface Closeable {
  close(): Promise<void>;
}

export interface HttpServer extends Closeable {
  readonly port: number;
  readonly server: http.Server;
}

/** An HTTP/1.1 listener whose close() stops accepting, lets in-flight requests finish, then ends. */
export async function serveHttp(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  port: number,
  host: string,
  options: { maxHeaderSize?: number; maxHeadersCount?: number } = {},
): Promise<HttpServer> {
  const { maxHeadersCount, ...serverOptions } = options;
  const server = http.createServer({ keepAliveTimeout: 65_000, requestTimeout: 120_000, ...serverOptions }, handler);
  if (maxHeadersCount !== undefined) server.maxHeadersCount = maxHeadersCount;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        // In-flight requests finish; a keep-alive socket is closed as soon as it turns idle.
        const sweep = setInterval(() => server.closeIdleConnections(), 50);
        server.close(() => {
          clearInterval(sweep);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}

/**
 * Runs a service's start-up. A bad configuration stops it with one line naming the
 * variable; SIGTERM/SIGINT close what it returned (listeners first: in-flight requests
 * finish) and exit 0, or exit 1 if that takes longer than `drainMs`.
 */
export function runMain(name: string, start: () => Promise<{ logger: Logger; closeables: Closeable[] }>, drainMs = 25_000) {
  start().then(
    ({ logger, closeables }) => {
      let stopping = false;
      const stop = (signal: string) => {
        if (stopping) return;
        stopping = true;
        logger.info({ signal }, `${name} stopping`);
        const timer = setTimeout(() => {
          logger.error(`${name} did not stop within ${drainMs} ms`);
          process.exit(1);
        }, drainMs);
        timer.unref();
        void (async () => {
          for (const c of closeables) {
            try {
              await c.close();
            } catch (err) {
              logger.warn({ err }, "close failed");
            }
          }
          logger.info(`${name} stopped`);
          process.exit(0);
        })();
      };
      process.on("SIGTERM", () => stop("SIGTERM"));
      process.on("SIGINT", () => stop("SIGINT"));
    },
    (err: unknown) => {
      if (ConfigError.is(err)) {
        process.stderr.write(`${name}: ${err.message}\n`);
      } else {
        process.stderr.write(`${name}: start-up failed: ${err instanceof Error ? err.message : String(err)}\n`);
      }
      process.exit(1);
    },
  );
}
