import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import type { ConnectRouter, Transport } from "@connectrpc/connect";

import type { ConfigOf } from "@whc/config";
import { CatalogService, CryptoService, Health, ReplayService } from "@whc/contracts";
import type { Logger } from "@whc/logging";
import { healthRoutes, createInMemoryTransport, createServiceClient as createClient, type ServeOptions } from "@whc/rpc";
import { Registry, collectDefaultMetrics } from "prom-client";
import { createCatalogService, tracedStore, type CatalogStore } from "@whc/catalog-core";
import { openSqliteStore, openSqliteStoreInWorker } from "@whc/catalog-sqlite";
import { openMongoStore } from "@whc/catalog-mongo";
import { createCryptoService, loadKeyRing } from "@whc/crypto-core";
import { createBlindIndexSource, createEnvelopeOpener, createEnvelopeSealer } from "@whc/sealing";
import {
  createAppendBatcher,
  BATCH_LINGER_MS,
  createEndpointCache,
  createIngestHandler,
  createIngestMetrics,
  createParseErrorAnswers,
  INGEST_MAX_HEADER_BYTES,
  traceCaptures,
} from "@whc/ingest-core";
import { createGatewayApp } from "@whc/gateway-core";
import { ensureBootstrapKeys } from "@whc/identity";
import {
  createMemoryBus,
  createMemoryLeases,
  createNatsBus,
  createNatsConnection,
  createNatsLeases,
} from "@whc/messaging";
import type { CaptureBus, EgressLeases } from "@whc/ports";
import { createForwarder, createForwardMetrics, createReplayService } from "@whc/replay-core";
import type { catalogSpec, cryptoSpec, gatewaySpec, ingestSpec, replaySpec } from "./specs.js";
import { serveHttp, type Closeable } from "./process.js";

type Routes = (router: ConnectRouter) => void;
const HOUR_MS = 3_600_000;

/**
 * Where the embedded store runs. `own-thread`: on a worker thread, where the process's event
 * loop also serves HTTP (the all-in-one process: ingest and the gateway never wait for a commit
 * or its fsync). `this-thread`: on the caller's thread, in a catalog process whose event loop
 * serves nothing but the store's own calls, which one SQLite connection runs one at a time
 * either way; handing each call and its answer to another thread cost that process 12 % of
 * its CPU per capture (docs/performance.md, "The catalog's store on its own thread").
 */
export type EmbeddedStoreThread = "own-thread" | "this-thread";

/** MongoDB when WHC_MONGODB_URI is set, else the embedded SQLite file under WHC_DATA_DIR. */
export async function openCatalogStore(config: ConfigOf<typeof catalogSpec>, thread: EmbeddedStoreThread = "own-thread"): Promise<CatalogStore> {
  if (config.mongodbUri) {
    return openMongoStore({ uri: config.mongodbUri, writeConcern: config.mongodbWriteConcern, dbName: undefined });
  }
  const file = path.join(config.dataDir, "catalog.db");
  return thread === "this-thread" ? openSqliteStore({ file }) : openSqliteStoreInWorker({ file });
}

/** The catalog: its store, its RPC routes, bootstrap keys, and the retention purge. */
export async function createCatalogNode(config: ConfigOf<typeof catalogSpec>, logger: Logger, thread: EmbeddedStoreThread = "own-thread") {
  const store = tracedStore(await openCatalogStore(config, thread));
  const service = createCatalogService(store, { endpointQuota: config.quotaEndpoints, listeners: { ttlMs: config.listenerTtlS * 1000 } });
  const routes: Routes = (router) => {
    router.service(CatalogService, service);
    healthRoutes({ "": () => store.ping(), [CatalogService.typeName]: () => store.ping() })(router);
  };
  const local = createClient(CatalogService, createInMemoryTransport(routes, logger, 30_000));
  const created = await ensureBootstrapKeys(local, config.bootstrapApiKeys);
  if (created > 0) logger.info({ created }, "bootstrap API keys registered");

  const purge = async () => {
    try {
      const cutoff = Date.now() - config.retentionDays * 24 * HOUR_MS;
      const { purged } = await local.purgeEvents({ receivedBeforeMs: BigInt(cutoff) });
      if (purged > 0) logger.info({ purged, retentionDays: config.retentionDays }, "retention purge");
    } catch (err) {
      logger.warn({ err }, "retention purge failed");
    }
  };
  const first = setTimeout(() => void purge(), 10_000);
  const every = setInterval(() => void purge(), HOUR_MS);
  first.unref();
  every.unref();

  return {
    routes,
    store,
    client: local,
    closeable: {
      async close() {
        clearTimeout(first);
        clearInterval(every);
        await store.close();
      },
    } satisfies Closeable,
  };
}

/** The crypto service over the key ring from WHC_MASTER_KEYS or the data directory. */
export function createCryptoNode(config: ConfigOf<typeof cryptoSpec>, logger: Logger) {
  const { ring, generated } = loadKeyRing({
    masterKeys: config.masterKeys,
    blindIndexKey: config.blindIndexKey,
    dataDir: config.dataDir,
  });
  if (generated) logger.warn({ dataDir: config.dataDir }, "generated a new key ring in the data directory");
  const routes: Routes = (router) => {
    router.service(CryptoService, createCryptoService(ring));
    healthRoutes({ "": () => true, [CryptoService.typeName]: () => true })(router);
  };
  return { routes, activeKeyId: ring.active.id };
}

/** Egress leases: NATS KV when WHC_NATS_URL is set, else in the process. */
export function createLeases(config: ConfigOf<typeof replaySpec>, name: string, logger: Logger): EgressLeases {
  if (!config.natsUrl) {
    return createMemoryLeases({ slotsPerOrigin: config.egressSlotsPerOrigin, ttlMs: config.egressLeaseTtlS * 1000 });
  }
  return createNatsLeases(
    createNatsConnection(config.natsUrl, name, logger),
    { slotsPerOrigin: config.egressSlotsPerOrigin, ttlS: config.egressLeaseTtlS },
    logger,
  );
}

/**
 * Replay: the SSRF guard, leases, allowance, the request and its audit record; and
 * forwarding: the ForwardEvent, RecordClientAttempt and CheckForwardTarget RPCs and the relay
 * outbox worker, started here (woken by ingest through the bus) and stopped by the closeable.
 */
export function createReplayNode(
  config: ConfigOf<typeof replaySpec>,
  peers: Pick<Peers, "catalog" | "crypto">,
  leases: EgressLeases,
  bus: CaptureBus,
  logger: Logger,
) {
  const crypto = createClient(CryptoService, peers.crypto);
  const catalog = createClient(CatalogService, peers.catalog);
  const metrics = createForwardMetrics(async () => {
    const stats = await catalog.getOutboxStats({});
    return { pending: Number(stats.pending), oldestDueAt: stats.oldestDueAtMs === undefined ? undefined : Number(stats.oldestDueAtMs) };
  });
  const deps = {
    catalog,
    crypto,
    opener: createEnvelopeOpener(crypto, { maxAgeMs: config.dataKeyTtlS * 1000, maxEntries: 10_000 }),
    sealer: createEnvelopeSealer(crypto, { maxAgeMs: config.dataKeyTtlS * 1000, maxUses: 1_000_000 }),
    leases,
    logger,
    metrics,
  };
  const service = createReplayService(deps, {
    dailyLimit: config.replayDailyLimit,
    allowPrivateTargets: config.replayAllowPrivateTargets,
    connectTimeoutMs: config.replayConnectTimeoutMs,
    totalTimeoutMs: config.replayTimeoutMs,
    maxExcerptBytes: 4096,
  });
  const forwarder = createForwarder(
    { ...deps, bus },
    {
      allowPrivateTargets: config.replayAllowPrivateTargets,
      connectTimeoutMs: config.replayConnectTimeoutMs,
      retryBaseMs: config.forwardRetryBaseMs,
      pollMs: config.forwardPollMs,
      claimMs: config.forwardClaimMs,
    },
  );
  forwarder.start();
  const routes: Routes = (router) => {
    router.service(ReplayService, service);
    healthRoutes({ "": () => true, [ReplayService.typeName]: () => true, egress: () => leases.connected() })(router);
  };
  return {
    routes,
    forwarder,
    /** The whc_forward_* series in Prometheus text, without the process's own (for merging with another registry's). */
    metrics: () => metrics.registry.metrics(),
    closeable: {
      async close() {
        await forwarder.stop();
        await leases.close();
      },
    } satisfies Closeable,
  };
}

/**
 * GET /metrics of a replay process: the forward series and the process's own. Served as the
 * fallback of its RPC server (no other route of that server takes a GET).
 */
export function replayMetricsFallback(forwardMetrics: () => Promise<string>, logger: Logger): NonNullable<ServeOptions["fallback"]> {
  const own = new Registry();
  collectDefaultMetrics({ register: own });
  return (req, res) => {
    if (req.method !== "GET" || (req.url ?? "").split("?", 1)[0] !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("not found\n");
      return;
    }
    Promise.all([forwardMetrics(), own.metrics()]).then(
      ([forward, processText]) => {
        res.writeHead(200, { "content-type": own.contentType });
        res.end(`${processText}\n${forward}`);
      },
      (err: unknown) => {
        logger.error({ err }, "metrics collection failed");
        res.writeHead(500, { "content-type": "text/plain" });
        res.end("metrics collection failed\n");
      },
    );
  };
}

export function createBus(natsUrl: string | undefined, name: string, logger: Logger): CaptureBus {
  if (!natsUrl) return createMemoryBus();
  return createNatsBus(createNatsConnection(natsUrl, name, logger), logger);
}

export interface Peers {
  catalog: Transport;
  crypto: Transport;
  replay?: Transport;
}

/**
 * Ingest: the receiving surface. `peers.replay` forwards proxy endpoints' captures; its
 * transport's deadline must allow a proxy call (replayDeadlineMs from @whc/ingest-core).
 * `batchLingerMs`: how long a group commit may wait for more captures (BatcherOptions.lingerMs);
 * `encodeCaptures`: send them encoded in one pass (BatcherOptions.encodeCaptures), for a catalog
 * in another process.
 */
export function createIngestNode(
  config: ConfigOf<typeof ingestSpec>,
  peers: Required<Peers>,
  bus: CaptureBus,
  logger: Logger,
  { batchLingerMs = BATCH_LINGER_MS, encodeCaptures = true }: { batchLingerMs?: number; encodeCaptures?: boolean } = {},
) {
  const catalog = createClient(CatalogService, peers.catalog);
  const crypto = createClient(CryptoService, peers.crypto);
  const endpoints = createEndpointCache(catalog, crypto, {
    ttlMs: config.endpointCacheTtlMs,
    missTtlMs: Math.min(config.endpointCacheTtlMs, 1000),
    maxEntries: 10_000,
  });
  bus.subscribeEndpointChanges((id) => endpoints.invalidate(id));
  const metrics = createIngestMetrics();
  const untraced = createIngestHandler(
    {
      endpoints,
      batcher: createAppendBatcher(catalog, { maxEvents: 512, maxBytes: 8 * 1024 * 1024, onBatch: (n) => metrics.batch(n), lingerMs: batchLingerMs, encodeCaptures }),
      sealer: createEnvelopeSealer(crypto, { maxAgeMs: config.dataKeyTtlS * 1000, maxUses: 1_000_000 }),
      blindIndex: createBlindIndexSource(crypto),
      bus,
      replay: createClient(ReplayService, peers.replay),
      catalog,
      health: { catalog: createClient(Health, peers.catalog), crypto: createClient(Health, peers.crypto) },
      metrics,
      logger,
    },
    {
      maxStoredBodyBytes: config.maxStoredBodyBytes,
      maxInboundBodyBytes: config.maxInboundBodyBytes,
      maxInflightBytes: config.ingestMaxInflightBytes,
      trustedProxies: new Set(config.trustedProxies),
      secretGraceMs: config.secretGraceS * 1000,
      publicUrl: config.ingestPublicUrl,
    },
  );
  const handler = traceCaptures(untraced);
  return {
    handler,
    /**
     * Header sections up to INGEST_MAX_HEADER_BYTES are captured whole, however many lines
     * they hold (Node would otherwise drop every line after the 2,000th without a word);
     * larger sections get a 431. `Expect: 100-continue` is answered by the handler, after
     * the endpoint lookup, not by Node at once. Bytes the parser refuses after a complete
     * request leave that request its own answer (createParseErrorAnswers).
     */
    serve: async (port: number, host: string) => {
      const parseErrors = createParseErrorAnswers();
      const tracked = (req: IncomingMessage, res: ServerResponse, expectsContinue = false) => {
        parseErrors.track(req, res);
        handler(req, res, expectsContinue);
      };
      const served = await serveHttp(tracked, port, host, { maxHeaderSize: INGEST_MAX_HEADER_BYTES, maxHeadersCount: 0 });
      served.server.on("checkContinue", (req: IncomingMessage, res: ServerResponse) => tracked(req, res, true));
      served.server.on("clientError", parseErrors.onClientError);
      return served;
    },
  };
}

export function createGatewayNode(
  config: ConfigOf<typeof gatewaySpec>,
  peers: Required<Peers>,
  bus: CaptureBus,
  logger: Logger,
  /** Prometheus text of services running in the same process, appended to /metrics. */
  extraMetrics?: () => Promise<string>,
) {
  const crypto = createClient(CryptoService, peers.crypto);
  const shutdown = new AbortController();
  const app = createGatewayApp(
    {
      catalog: createClient(CatalogService, peers.catalog),
      crypto,
      replay: createClient(ReplayService, peers.replay),
      health: {
        catalog: createClient(Health, peers.catalog),
        crypto: createClient(Health, peers.crypto),
        replay: createClient(Health, peers.replay),
      },
      opener: createEnvelopeOpener(crypto, { maxAgeMs: config.dataKeyTtlS * 1000, maxEntries: 10_000 }),
      blindIndex: createBlindIndexSource(crypto),
      bus,
      logger,
    },
    {
      ingestPublicUrl: config.ingestPublicUrl,
      replayDailyLimit: config.replayDailyLimit,
      waitPollMs: 1000,
      quotas: { apiRps: config.quotaApiRps, waitsPerKey: config.quotaWaitsPerKey },
      shutdownSignal: shutdown.signal,
      dashboardDir: path.resolve(config.dashboardDir),
      ...(extraMetrics ? { extraMetrics } : {}),
    },
  );
  /** Answers held long polls, then stops accepting and lets in-flight requests finish. */
  const serve = async (port: number, host: string): Promise<Closeable & { port: number }> => {
    const server = await serveHttp(app.callback(), port, host);
    return {
      port: server.port,
      async close() {
        shutdown.abort();
        await server.close();
      },
    };
  };
  return { app, serve };
}
