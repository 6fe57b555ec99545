import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import type { ConnectRouter, Transport } from "@connectrpc/connect";

import { ensurePrivateDir, type ConfigOf } from "@whc/config";
import { CatalogService, CryptoService, Health, ReplayService } from "@whc/contracts";
import type { Logger } from "@whc/logging";
import {
  createInMemoryTransport,
  createReadiness,
  createServiceClient as createClient,
  healthRoutes,
  peerServing,
  type DependencyCheck,
  type Readiness,
} from "@whc/rpc";
import { createAlertRaiser, createCatalogService, createSchemaLearner, tracedStore, type CatalogStore, type OnSchemaDrift, type RaiseAlerts } from "@whc/catalog-core";
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
  createRejectionCounter,
  INGEST_MAX_HEADER_BYTES,
  traceCaptures,
} from "@whc/ingest-core";
import { createGatewayApp, createGatewayMetrics } from "@whc/gateway-core";
import { ensureBootstrapKeys } from "@whc/identity";
import {
  createMemoryBus,
  createMemoryLeases,
  createNatsBus,
  createNatsConnection,
  createNatsLeases,
} from "@whc/messaging";
import type { CaptureBus, EgressLeases } from "@whc/ports";
import { createAlertMetrics, createAlertWorker, createForwarder, createForwardMetrics, createRedeliveryRunner, createReplayService } from "@whc/replay-core";
import { Registry } from "prom-client";
import { TransformSandbox } from "@whc/transform-sandbox";
import { createEgressGuard, type InternalService } from "@whc/egress-guard";
import type { catalogSpec, cryptoSpec, gatewaySpec, ingestSpec, replaySpec } from "./specs.js";
import { serveHttp, type Closeable } from "./process.js";

type Routes = (router: ConnectRouter) => void;
const HOUR_MS = 3_600_000;
/** Finished alerts are kept this long (ADR 0085). */
const ALERT_RETENTION_MS = 7 * 24 * HOUR_MS;

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

/**
 * The data directory holds keys and captures: created 0700 (files 0600, see @whc/config); one
 * that already exists is left as it is, with a warning when others may read it.
 */
function privateDataDir(dataDir: string, logger: Logger): void {
  const { openedTo } = ensurePrivateDir(dataDir);
  if (openedTo !== 0) {
    logger.warn({ dataDir, mode: `0${(0o700 | openedTo).toString(8)}` }, "the data directory is readable by other users: chmod 700 it");
  }
}

/**
 * Where schema.drift goes (design §19): the hook of the catalog's schema learner (ADR 0090).
 * Alert channels (design §18) plug in here: each notice becomes one `schema.drift` alert of
 * its endpoint with data `{eventType, eventId, changes, count}`. Until they exist it is a log
 * line per notice (at most one per endpoint and event type per hour).
 */
/**
 * Each schema.drift notice is logged and raised as an alert of its endpoint (design §18, §19):
 * alert channels that name schema.drift get it, coalesced as every alert is.
 */
function schemaDriftHook(logger: Logger, raise: RaiseAlerts): OnSchemaDrift {
  return (notices) => {
    for (const n of notices) {
      logger.info({ endpointId: n.endpointId, eventType: n.eventType, eventId: n.eventId, changes: n.changes.length, count: n.count }, "schema drift");
    }
    void raise(
      notices.map((n) => ({
        accountId: n.accountId,
        type: "schema.drift",
        endpointId: n.endpointId,
        data: { eventType: n.eventType, eventId: n.eventId, changes: n.changes, count: n.count },
      })),
    );
  };
}

/** The catalog: its store, its RPC routes, its schema learner, bootstrap keys, and the retention purge. */
export async function createCatalogNode(config: ConfigOf<typeof catalogSpec>, logger: Logger, thread: EmbeddedStoreThread = "own-thread") {
  if (!config.mongodbUri) privateDataDir(config.dataDir, logger);
  const store = tracedStore(await openCatalogStore(config, thread));
  const raiseDrift = createAlertRaiser(store, Date.now, { coalesceMs: config.alertCoalesceS * 1000 }, logger);
  const schemaLearner = createSchemaLearner(store, { onDrift: schemaDriftHook(logger, raiseDrift), logger });
  const service = createCatalogService(store, {
    endpointQuota: config.quotaEndpoints,
    keyQuota: config.quotaKeys,
    listeners: { ttlMs: config.listenerTtlS * 1000, stallMs: config.listenerStallS * 1000 },
    alerts: { coalesceMs: config.alertCoalesceS * 1000 },
    redeliveries: { runningPerAccount: config.quotaRedeliveryJobs, deliveriesPerJob: config.redeliveryMaxDeliveries },
    logger,
    schemaLearner,
  });
  // Its one dependency is its store; gRPC health answers it truthfully, under both names.
  const readiness = createReadiness({ store: () => store.ping() });
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
      const auditCutoff = Date.now() - config.auditRetentionDays * 24 * HOUR_MS;
      const { purged: entries } = await local.purgeAudit({ beforeMs: BigInt(auditCutoff) });
      if (entries > 0) logger.info({ purged: entries, auditRetentionDays: config.auditRetentionDays }, "audit log retention purge");
      // Keys dead for longer than the cutoff (ADR 0054); their audit entries stay.
      const keyCutoff = Date.now() - config.keyRetentionDays * 24 * HOUR_MS;
      const { purged: keys } = await local.purgeApiKeys({ beforeMs: BigInt(keyCutoff) });
      if (keys > 0) logger.info({ purged: keys, keyRetentionDays: config.keyRetentionDays }, "api key retention purge");
      // Sent and abandoned alerts: kept a week (a channel's lastDelivery stays), far past any coalescing window.
      const alerts = await store.purgeAlerts(Date.now() - ALERT_RETENTION_MS);
      if (alerts > 0) logger.info({ purged: alerts }, "finished alerts purged");
      // Finished bulk redelivery jobs: kept as long as events are (ADR 0089).
      const jobs = await store.purgeRedeliveryJobs(cutoff);
      if (jobs > 0) logger.info({ purged: jobs }, "finished redelivery jobs purged");
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
    readiness,
    client: local,
    closeable: {
      async close() {
        clearTimeout(first);
        clearInterval(every);
        // What the learner holds is learned before the store closes.
        await schemaLearner.close();
        await store.close();
      },
    } satisfies Closeable,
  };
}

/** The crypto service over the key ring from WHC_MASTER_KEYS or the data directory. */
export function createCryptoNode(config: ConfigOf<typeof cryptoSpec>, logger: Logger) {
  if (config.masterKeys.length === 0 || !config.blindIndexKey) privateDataDir(config.dataDir, logger);
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

/** host:port of a service URL (http, https, nats, tls, or bare host:port), with the scheme's port when none is given. */
function hostPort(url: string, defaultPort: number): InternalService | undefined {
  const m = /^(?:[a-z]+:\/\/)?(\[[^\]]+\]|[^:/@[\]]+)(?::(\d+))?/i.exec(url);
  if (!m) return undefined;
  const port = m[2] ? Number(m[2]) : /^https:/i.test(url) ? 443 : defaultPort;
  return { host: (m[1] as string).replace(/^\[|\]$/g, ""), port };
}

/**
 * The deployment's own internal services, which no replay, forward or alert may reach even
 * with private targets allowed (design §14): the catalog and crypto services it calls, its
 * own replay and metrics ports, and NATS.
 */
export function internalServices(config: ConfigOf<typeof replaySpec>): InternalService[] {
  const services = [
    hostPort(config.catalogUrl, 80),
    hostPort(config.cryptoUrl, 80),
    { host: config.internalHost, port: config.replayPort },
    ...(config.metricsPort > 0 ? [{ host: config.internalHost, port: config.metricsPort }] : []),
    ...(config.natsUrl ? [hostPort(config.natsUrl, 4222)] : []),
  ];
  return services.filter((s): s is InternalService => s !== undefined);
}

/**
 * Replay: the SSRF guard, leases, allowance, the request and its audit record; and
 * forwarding: the ForwardEvent, RecordClientAttempt and CheckForwardTarget RPCs and the relay
 * outbox worker, started here (woken by ingest through the bus) and stopped by the closeable;
 * and the alert outbox's worker and bulk redelivery's runner, beside it.
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
  const readiness = createReadiness({
    catalog: peerServing(createClient(Health, peers.catalog), CatalogService.typeName),
    crypto: peerServing(createClient(Health, peers.crypto), CryptoService.typeName),
    ...(config.natsUrl ? { nats: () => leases.connected() && bus.connected() } : {}),
  });
  const metrics = createForwardMetrics(async () => {
    const stats = await catalog.getOutboxStats({});
    return {
      pending: Number(stats.pending),
      oldestDueAt: stats.oldestDueAtMs === undefined ? undefined : Number(stats.oldestDueAtMs),
      breakers: stats.breakers.map((b) => ({ destinationId: b.destinationId, state: b.state, held: Number(b.held) })),
    };
  });
  const deps = {
    catalog,
    crypto,
    opener: createEnvelopeOpener(crypto, { maxAgeMs: config.dataKeyTtlS * 1000, maxEntries: 10_000 }),
    sealer: createEnvelopeSealer(crypto, { maxAgeMs: config.dataKeyTtlS * 1000, maxUses: 1_000_000 }),
    leases,
    logger,
    metrics,
    egress: createEgressGuard({
      allowPrivate: config.replayAllowPrivateTargets,
      internal: internalServices(config),
      keepIdleMs: config.egressKeepIdleMs,
      keepPerAddress: config.egressSlotsPerOrigin,
    }),
    // Destinations' transforms (design §17), on the sandbox's own threads, started when first used.
    transforms: new TransformSandbox(),
  };
  const service = createReplayService(deps, {
    dailyLimit: config.replayDailyLimit,
    connectTimeoutMs: config.replayConnectTimeoutMs,
    totalTimeoutMs: config.replayTimeoutMs,
    maxExcerptBytes: 4096,
  });
  const forwarder = createForwarder(
    { ...deps, bus },
    {
      connectTimeoutMs: config.replayConnectTimeoutMs,
      retryBaseMs: config.forwardRetryBaseMs,
      pollMs: config.forwardPollMs,
      claimMs: config.forwardClaimMs,
    },
  );
  forwarder.start();
  const alertMetrics = createAlertMetrics();
  // The alert outbox's worker (ADR 0085): the forwarder's timing settings, its own claims.
  const alerts = createAlertWorker(
    { catalog, crypto, leases, egress: deps.egress, logger, metrics: alertMetrics },
    {
      connectTimeoutMs: config.replayConnectTimeoutMs,
      retryBaseMs: config.forwardRetryBaseMs,
      pollMs: config.forwardPollMs,
      claimMs: config.forwardClaimMs,
    },
  );
  alerts.start();
  // Bulk redelivery's runner (ADR 0089): walks jobs into the outbox, which the forwarder here
  // (woken at each page) and in every other replay process sends.
  const redeliveries = createRedeliveryRunner(
    { catalog, logger, onQueued: () => forwarder.wake() },
    { pollMs: config.forwardPollMs, leaseMs: config.forwardClaimMs, pageSize: config.redeliveryPageSize, window: config.redeliveryWindow },
  );
  redeliveries.start();
  // "": this process's readiness (catalog, crypto, NATS); the service's own name: whether it
  // answers at all, which is what a caller checks (it names its own dependencies itself).
  const ready = async () => (await readiness.check()).status === "ok";
  const routes: Routes = (router) => {
    router.service(ReplayService, service);
    healthRoutes({ "": ready, [ReplayService.typeName]: () => true, egress: () => leases.connected() })(router);
  };
  return {
    routes,
    forwarder,
    alerts,
    redeliveries,
    readiness,
    /** The whc_forward_* and whc_alert* series only: the process's own are its metrics port's to add. */
    registry: Registry.merge([metrics.registry, alertMetrics.registry]),
    closeable: {
      async close() {
        // The runner first: the jobs it holds go back at once, for another replica to continue.
        await redeliveries.stop();
        await Promise.all([forwarder.stop(), alerts.stop()]);
        await deps.transforms.close();
        deps.egress.close();
        await leases.close();
      },
    } satisfies Closeable,
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
 * What gateway and ingest depend on: the three services, each asked by its own service name
 * (the catalog's answers for its store), and NATS when the bus is NATS.
 */
function edgeReadiness(peers: Required<Peers>, bus: CaptureBus): Readiness {
  const checks: Record<string, DependencyCheck> = {
    catalog: peerServing(createClient(Health, peers.catalog), CatalogService.typeName),
    crypto: peerServing(createClient(Health, peers.crypto), CryptoService.typeName),
    replay: peerServing(createClient(Health, peers.replay), ReplayService.typeName),
  };
  if (bus.kind === "nats") checks.nats = () => bus.connected();
  return createReadiness(checks);
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
  const readiness = edgeReadiness(peers, bus);
  const rejections = createRejectionCounter(catalog, logger);
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
      readiness,
      metrics,
      logger,
      rejections,
    },
    {
      maxStoredBodyBytes: config.maxStoredBodyBytes,
      maxInboundBodyBytes: config.maxInboundBodyBytes,
      maxInflightBytes: config.ingestMaxInflightBytes,
      maxInflightBytesPerPeer: config.ingestMaxInflightBytesPerPeer,
      maxInflightBytesPerEndpoint: config.ingestMaxInflightBytesPerEndpoint,
      bodyIdleMs: config.ingestBodyIdleMs,
      trustedProxies: new Set(config.trustedProxies),
      secretGraceMs: config.secretGraceS * 1000,
      maxHops: config.maxHops,
      publicUrl: config.ingestPublicUrl,
      learnSchemas: config.schemaLearning,
    },
  );
  const handler = traceCaptures(untraced);
  return {
    handler,
    readiness,
    /** The whc_ingest_* series only: the process's own are its metrics port's to add. */
    registry: metrics.registry,
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
      // What was refused in the last second still reaches the catalog when the process stops.
      return {
        ...served,
        async close() {
          await served.close();
          await rejections.close();
        },
      };
    },
  };
}

export function createGatewayNode(
  config: ConfigOf<typeof gatewaySpec>,
  peers: Required<Peers>,
  bus: CaptureBus,
  logger: Logger,
  /** The all-in-one process's own ingest listener, where triggered samples go unless WHC_INGEST_INTERNAL_URL says otherwise. */
  ownIngestUrl?: string,
) {
  const ingestUrl = config.ingestInternalUrl ?? ownIngestUrl;
  const crypto = createClient(CryptoService, peers.crypto);
  const shutdown = new AbortController();
  const readiness = edgeReadiness(peers, bus);
  const metrics = createGatewayMetrics();
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
      readiness,
      opener: createEnvelopeOpener(crypto, { maxAgeMs: config.dataKeyTtlS * 1000, maxEntries: 10_000 }),
      blindIndex: createBlindIndexSource(crypto),
      bus,
      logger,
    },
    {
      ingestPublicUrl: config.ingestPublicUrl,
      ...(ingestUrl ? { ingestUrl } : {}),
      replayDailyLimit: config.replayDailyLimit,
      waitPollMs: 1000,
      quotas: { apiRps: config.quotaApiRps, waitsPerKey: config.quotaWaitsPerKey },
      exportIdleMs: config.exportIdleS * 1000,
      trustedProxies: new Set(config.trustedProxies),
      shutdownSignal: shutdown.signal,
      dashboardDir: path.resolve(config.dashboardDir),
      metrics,
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
  return { app, serve, readiness, registry: metrics.registry };
}
