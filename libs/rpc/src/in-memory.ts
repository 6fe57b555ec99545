import { createRouterTransport, type ConnectRouter, type Transport } from "@connectrpc/connect";
import type { Logger } from "@whc/logging";
import { serverInterceptor } from "./server.js";
import { clientInterceptor } from "./client.js";

/**
 * The all-in-one wiring: the same services and the same interceptors on both ends, but
 * messages travel through memory instead of a socket.
 */
export function createInMemoryTransport(
  routes: (router: ConnectRouter) => void,
  logger: Logger,
  timeoutMs: number,
): Transport {
  return createRouterTransport(routes, {
    router: { interceptors: [serverInterceptor(logger)] },
    transport: { interceptors: [clientInterceptor(timeoutMs)] },
  });
}
