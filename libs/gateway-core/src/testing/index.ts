/**
 * Test support only (never exported from index.ts): the gateway over its real collaborators,
 * built in memory: the catalog on an SQLite file in a temp dir, crypto over a fresh key ring,
 * replay with in-process leases, a memory bus, and Connect in-memory transports between them.
 * The Koa app is served on 127.0.0.1, port 0.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import type { Client, ConnectRouter } from "@connectrpc/connect";
import type Koa from "koa";
import { ApiError, createApiClient, type ApiClient } from "@whc/api-model";
import { capturedSummaryJson } from "@whc/api-model/present";
import { CapturedEventSchema, CatalogService, CryptoService, Health, ReplayService } from "@whc/contracts";
import { createCatalogService, createSchemaLearner, type CatalogStore } from "@whc/catalog-core";
import { bodyShapeText } from "@whc/ingest-core";
import { openSqliteStore } from "@whc/catalog-sqlite";
import { createCryptoService, createKeyRing } from "@whc/crypto-core";
import { generateApiKey, hashApiKey, keyPrefix } from "@whc/identity";
import { createLogger, type Logger } from "@whc/logging";
import { createMemoryBus, createMemoryLeases } from "@whc/messaging";
import type { CaptureBus } from "@whc/ports";
import { createReplayService } from "@whc/replay-core";
import { TransformSandbox } from "@whc/transform-sandbox";
import { createEgressGuard } from "@whc/egress-guard";
import { createInMemoryTransport, createReadiness, createServiceClient, healthRoutes, peerServing } from "@whc/rpc";
import { createBlindIndexSource, createEnvelopeOpener, createEnvelopeSealer } from "@whc/sealing";
import { appendCaptures, tempDir } from "@whc/testing";
import { createGatewayApp } from "../app.js";
import type { GatewayDeps, GatewayOptions } from "../deps.js";

export interface TestAccount {
  name: string;
  key: string;
  accountId: string;
  /** The typed client, with this account's key. */
  api: ApiClient;
}

/** What a captured request looked like, as ingest would store it. */
export interface CaptureInput {
  method?: string;
  /** Sub-path and query after the webhookUrl. */
  path?: string;
  headers?: [string, string][];
  /** Absent: metadata only (no body stored). */
  body?: Uint8Array | string;
  provider?: string;
  canonicalEventType?: string;
  verification?: string;
  responseCode?: number;
  /** The deliveries ingest would start (design §17): one per destination matched. */
  deliveries?: { destinationId: string; target: string }[];
  /** relay: the deliveries enter the outbox. */
  forwardScheduled?: boolean;
}

export interface AppendedCapture {
  id: string;
  receivedAtMs: number;
  /** receivedAt as the API shows it. */
  receivedAt: string;
}

export interface TestGatewayOptions {
  replayDailyLimit?: number;
  waitPollMs?: number;
  /** Replays in flight to one origin at most (default 4). */
  egressSlotsPerOrigin?: number;
  /** WHC_REPLAY_ALLOW_PRIVATE_TARGETS (default true: the tests' targets are on loopback). */
  allowPrivateTargets?: boolean;
  /**
   * WHC_QUOTA_API_RPS (default here 10,000, so that tests making many calls with one key are
   * not throttled; the tests of the limit set their own).
   */
  apiRps?: number;
  /** The clock of the request rate (default Date.now): a test that stops it counts exactly. */
  now?: () => number;
  /** WHC_QUOTA_WAITS_PER_KEY (default 20). */
  waitsPerKey?: number;
  /** WHC_TRUSTED_PROXIES (default: none). */
  trustedProxies?: string[];
  /** WHC_QUOTA_ENDPOINTS (default: none). */
  endpointQuota?: number;
  /** WHC_QUOTA_KEYS (default: none). */
  keyQuota?: number;
  /** WHC_EXPORT_IDLE_S, in ms (default 120 s). */
  exportIdleMs?: number;
}

export interface TestGateway {
  url: string;
  app: Koa;
  options: GatewayOptions;
  catalog: Client<typeof CatalogService>;
  crypto: Client<typeof CryptoService>;
  /** Run inside the gateway's catalog calls, to stage races; unset after use. */
  hooks: { afterListEvents?: () => Promise<void> | void };
  /** Capture subscriptions open now (each held `wait` has one). */
  captureSubscribers(): number;
  /** Two accounts made at start. */
  a: TestAccount;
  b: TestAccount;
  /** Another account with its own key (e.g. its own replay allowance). */
  account(name?: string): Promise<TestAccount>;
  client(key?: string, extra?: { headers?: Record<string, string>; fetch?: typeof fetch }): ApiClient;
  /** Stores captures in one batch, sealed and indexed as ingest does; no capture notice. */
  append(account: TestAccount, endpointId: string, captures: CaptureInput[]): Promise<AppendedCapture[]>;
  /** Announces stored captures on the bus, as ingest does after each commit. */
  notify(account: TestAccount, endpointId: string, appended: AppendedCapture[]): void;
  /** Learns the shapes of what was appended so far (the catalog learns them after the commit, design §19). */
  learnSchemas(): Promise<void>;
  close(): Promise<void>;
}

const RPC_TIMEOUT_MS = 10_000;
type Routes = (router: ConnectRouter) => void;

/** The memory bus, counting the capture subscriptions open (each held `wait` has one). */
function countingBus(): { bus: CaptureBus; subscribers(): number } {
  const memory = createMemoryBus();
  let open = 0;
  const bus: CaptureBus = {
    ...memory,
    subscribeCaptures(accountId, endpointId, onNotice) {
      open += 1;
      const unsubscribe = memory.subscribeCaptures(accountId, endpointId, onNotice);
      return () => {
        open -= 1;
        unsubscribe();
      };
    },
  };
  return { bus, subscribers: () => open };
}

/** Catalog (SQLite in `dir`), crypto and replay, each behind its own in-memory Connect transport. */
function createServices(dir: string, opts: TestGatewayOptions, logger: Logger) {
  const store: CatalogStore = openSqliteStore({ file: `${dir}/catalog.db` });
  const ring = createKeyRing([{ id: "k1", key: randomBytes(32) }], randomBytes(32));
  const leases = createMemoryLeases({ slotsPerOrigin: opts.egressSlotsPerOrigin ?? 4, ttlMs: 30_000 });
  const transport = (routes: Routes) => createInMemoryTransport(routes, logger, RPC_TIMEOUT_MS);

  const schemaLearner = createSchemaLearner(store, { delayMs: 5 });
  const catalogTransport = transport((router) => {
    router.service(
      CatalogService,
      createCatalogService(store, {
        schemaLearner,
        ...(opts.endpointQuota === undefined ? {} : { endpointQuota: opts.endpointQuota }),
        ...(opts.keyQuota === undefined ? {} : { keyQuota: opts.keyQuota }),
      }),
    );
    healthRoutes({ "": () => store.ping(), [CatalogService.typeName]: () => store.ping() })(router);
  });
  const cryptoTransport = transport((router) => {
    router.service(CryptoService, createCryptoService(ring));
    healthRoutes({ "": () => true, [CryptoService.typeName]: () => true })(router);
  });
  const catalog = createServiceClient(CatalogService, catalogTransport);
  const crypto = createServiceClient(CryptoService, cryptoTransport);
  const transforms = new TransformSandbox();
  const replayTransport = transport((router) => {
    const deps = {
      transforms,
      catalog,
      crypto,
      opener: createEnvelopeOpener(crypto, { maxAgeMs: 60_000, maxEntries: 100 }),
      sealer: createEnvelopeSealer(crypto, { maxAgeMs: 60_000, maxUses: 1_000_000 }),
      leases,
      logger,
      egress: createEgressGuard({ allowPrivate: opts.allowPrivateTargets ?? true }),
    };
    router.service(
      ReplayService,
      createReplayService(deps, {
        dailyLimit: opts.replayDailyLimit ?? 1000,
        connectTimeoutMs: 2000,
        totalTimeoutMs: 5000,
        maxExcerptBytes: 4096,
      }),
    );
    healthRoutes({ "": () => true, [ReplayService.typeName]: () => true })(router);
  });

  return {
    catalog,
    crypto,
    replay: createServiceClient(ReplayService, replayTransport),
    health: {
      catalog: createServiceClient(Health, catalogTransport),
      crypto: createServiceClient(Health, cryptoTransport),
      replay: createServiceClient(Health, replayTransport),
    },
    schemaLearner,
    async close() {
      await schemaLearner.close();
      await transforms.close();
      await leases.close();
      await store.close();
    },
  };
}

/** The gateway's catalog client, with a hook after each event list query (to stage races). */
function hookedCatalog(catalog: Client<typeof CatalogService>, hooks: TestGateway["hooks"]): Client<typeof CatalogService> {
  return {
    ...catalog,
    async listEvents(...args: Parameters<typeof catalog.listEvents>) {
      const page = await catalog.listEvents(...args);
      await hooks.afterListEvents?.();
      return page;
    },
  };
}

/** Ingest's part, done as ingest does it (appendCaptures): captures sealed and indexed, stored in one batch, announced. */
function createCaptureWriter(catalog: Client<typeof CatalogService>, crypto: Client<typeof CryptoService>, bus: CaptureBus) {
  const sealer = createEnvelopeSealer(crypto, { maxAgeMs: 60_000, maxUses: 1_000_000 });
  const blindIndex = createBlindIndexSource(crypto);

  async function append(acct: TestAccount, endpointId: string, captures: CaptureInput[]): Promise<AppendedCapture[]> {
    const index = await blindIndex();
    const inputs = captures.map((c) => ({
      ...c,
      accountId: acct.accountId,
      endpointId,
      remoteIp: "127.0.0.1",
      // As ingest reads it: the shape of a JSON object body (design §19), "" otherwise.
      bodyShape: c.body === undefined ? "" : bodyShapeText(typeof c.body === "string" ? Buffer.from(c.body) : c.body),
    }));
    const appended = await appendCaptures(catalog, sealer, inputs, { index });
    return appended.map((e) => {
      if (e.endpointMissing) throw new Error(`endpoint ${endpointId} is missing`);
      const receivedAtMs = Number(e.receivedAtMs);
      return { id: e.id, receivedAtMs, receivedAt: new Date(receivedAtMs).toISOString() };
    });
  }

  function notify(acct: TestAccount, endpointId: string, appended: AppendedCapture[]): void {
    const capture = create(CapturedEventSchema, { accountId: acct.accountId, endpointId, method: "POST", provider: "generic", verification: "unverified", responseCode: 200 });
    for (const a of appended) bus.publishCapture({ accountId: acct.accountId, endpointId, summary: capturedSummaryJson(capture, a) });
  }

  return { append, notify };
}

function listen(app: Koa): Promise<http.Server> {
  return new Promise((resolve, reject) => {
    const server = http.createServer(app.callback());
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}

export async function startTestGateway(opts: TestGatewayOptions = {}): Promise<TestGateway> {
  // WHC_TEST_LOG_LEVEL=debug shows what the gateway and the services log.
  const logger = createLogger("gateway-test", (process.env.WHC_TEST_LOG_LEVEL ?? "silent") as Parameters<typeof createLogger>[1]);
  const dir = tempDir("whc-gateway-");
  const services = createServices(dir.path, opts, logger);
  const { catalog, crypto } = services;
  const { bus, subscribers } = countingBus();
  const hooks: TestGateway["hooks"] = {};

  const deps: GatewayDeps = {
    catalog: hookedCatalog(catalog, hooks),
    crypto,
    replay: services.replay,
    health: services.health,
    readiness: createReadiness({
      catalog: peerServing(services.health.catalog, CatalogService.typeName),
      crypto: peerServing(services.health.crypto, CryptoService.typeName),
      replay: peerServing(services.health.replay, ReplayService.typeName),
    }),
    opener: createEnvelopeOpener(crypto, { maxAgeMs: 60_000, maxEntries: 100 }),
    blindIndex: createBlindIndexSource(crypto),
    bus,
    logger,
  };
  const shutdown = new AbortController();
  const options: GatewayOptions = {
    ingestPublicUrl: "http://127.0.0.1:9",
    replayDailyLimit: opts.replayDailyLimit ?? 1000,
    waitPollMs: opts.waitPollMs ?? 1000,
    quotas: { apiRps: opts.apiRps ?? 10_000, waitsPerKey: opts.waitsPerKey ?? 20, ...(opts.now ? { now: opts.now } : {}) },
    ...(opts.trustedProxies ? { trustedProxies: new Set(opts.trustedProxies) } : {}),
    ...(opts.exportIdleMs ? { exportIdleMs: opts.exportIdleMs } : {}),
    shutdownSignal: shutdown.signal,
  };
  const app = createGatewayApp(deps, options);
  const server = await listen(app);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const client: TestGateway["client"] = (key, extra = {}) =>
    createApiClient({ baseUrl: url, ...(key ? { apiKey: key } : {}), ...extra });
  let accounts = 0;
  async function account(name = `acct-${++accounts}-${randomBytes(3).toString("hex")}`): Promise<TestAccount> {
    const key = generateApiKey();
    const res = await catalog.ensureApiKey({ accountName: name, keyHash: hashApiKey(key), prefix: keyPrefix(key) });
    return { name, key, accountId: res.key!.accountId, api: client(key) };
  }

  const [a, b] = [await account("acct-a"), await account("acct-b")];
  return {
    url,
    app,
    options,
    catalog,
    crypto,
    hooks,
    captureSubscribers: subscribers,
    a,
    b,
    account,
    client,
    ...createCaptureWriter(catalog, crypto, bus),
    learnSchemas: () => services.schemaLearner.flush(),
    async close() {
      shutdown.abort();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await bus.close();
      await services.close();
      dir.remove();
    },
  };
}

/** A client whose every Response is kept, for the status and headers of successful calls. */
export function recordingFetch(): { fetch: typeof fetch; last(): Response } {
  let last: Response | undefined;
  return {
    fetch: async (input, init) => (last = await fetch(input, init)),
    last() {
      if (!last) throw new Error("no call made yet");
      return last;
    },
  };
}

/** The call's ApiError; fails the test when the call succeeds or fails otherwise. */
export async function refusal(call: Promise<unknown>): Promise<ApiError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!ApiError.is(err)) throw new Error(`expected an ApiError, got ${String(err)}`);
  return err;
}
