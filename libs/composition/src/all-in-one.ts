import { createServiceClient as createClient } from "@whc/rpc";
import { CatalogService } from "@whc/contracts";
import type { ConfigOf } from "@whc/config";
import type { Logger } from "@whc/logging";
import { createInMemoryTransport, watchDependencies } from "@whc/rpc";
import { ensureFirstKey } from "@whc/identity";
import { replayDeadlineMs } from "@whc/ingest-core";
import type { allInOneSpec } from "./specs.js";
import {
  createBus,
  createCatalogNode,
  createCryptoNode,
  createGatewayNode,
  createIngestNode,
  createLeases,
  createReplayNode,
} from "./nodes.js";
import type { Closeable, HttpServer } from "./process.js";
import { serveMetrics } from "./metrics-port.js";

export interface AllInOne {
  gateway: Closeable & { port: number };
  ingest: HttpServer;
  /** GET /metrics of every service in the process, on WHC_INTERNAL_HOST; none when WHC_METRICS_PORT is 0. */
  metrics: (Closeable & { port: number }) | undefined;
  /** The key created on a first start with no key at all, to be shown once. */
  firstKey: string | undefined;
  closeables: Closeable[];
  close(): Promise<void>;
}

/** Where this process reaches a listener of its own bound to `host` (a wildcard: loopback). */
function listenerUrl(host: string, port: number): string {
  if (host === "0.0.0.0" || host === "") return `http://127.0.0.1:${port}`;
  if (host === "::") return `http://[::1]:${port}`;
  return host.includes(":") ? `http://[${host}]:${port}` : `http://${host}:${port}`;
}

/**
 * Every service in one process: internal calls go through Connect's in-memory transport
 * (same services, same interceptors), the catalog is the embedded store, and notifications
 * and leases stay in the process unless WHC_NATS_URL is set.
 */
export async function startAllInOne(config: ConfigOf<typeof allInOneSpec>, logger: Logger): Promise<AllInOne> {
  const catalog = await createCatalogNode(config, logger);
  const crypto = createCryptoNode(config, logger);
  const peer = (routes: typeof catalog.routes) => createInMemoryTransport(routes, logger, config.rpcTimeoutMs);
  const inner = { catalog: peer(catalog.routes), crypto: peer(crypto.routes) };
  const bus = createBus(config.natsUrl, "whc-all-in-one", logger);
  const replay = createReplayNode(config, inner, createLeases(config, "whc-all-in-one-leases", logger), bus, logger);
  const peers = { ...inner, replay: peer(replay.routes) };
  const firstKey = await ensureFirstKey(createClient(CatalogService, peers.catalog));
  // Proxy endpoints' calls to replay last up to their forward timeout, beyond WHC_RPC_TIMEOUT_MS.
  const ingestPeers = { ...peers, replay: createInMemoryTransport(replay.routes, logger, replayDeadlineMs(config.rpcTimeoutMs)) };
  // No linger: here the store's thread works while the event loop takes the next captures, and
  // merging the two groups of senders into one left one of them idle (7-20 % fewer captures/s,
  // docs/performance.md, "Ingest's batches"). Captures go to the catalog as messages: the
  // in-memory transport encodes nothing.
  const ingestNode = createIngestNode(config, ingestPeers, bus, logger, { batchLingerMs: 0, encodeCaptures: false });
  const ingest = await ingestNode.serve(config.ingestPort, config.host);
  const gatewayNode = createGatewayNode(config, peers, bus, logger, listenerUrl(config.host, ingest.port));
  const metrics = await serveMetrics(config, [gatewayNode.registry, ingestNode.registry, replay.registry], logger);
  const gateway = await gatewayNode.serve(config.gatewayPort, config.host);
  // The gateway's dependencies are every one of the process's (the store behind the catalog, NATS when set).
  const watch = watchDependencies(gatewayNode.readiness, logger, config.dependencyCheckMs);
  // The outbox worker stops (its attempts recorded) before the bus and the catalog close.
  const closeables: Closeable[] = [watch, gateway, ingest, ...(metrics ? [metrics] : []), replay.closeable, bus, catalog.closeable];
  return {
    gateway,
    ingest,
    metrics,
    firstKey,
    closeables,
    async close() {
      for (const c of closeables) await c.close();
    },
  };
}
