import { randomBytes, randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { createRouterTransport, type ConnectRouter, type Interceptor } from "@connectrpc/connect";
import { CatalogService, CryptoService, type Endpoint } from "@whc/contracts";
import { createCatalogService } from "@whc/catalog-core";
import { openSqliteStore } from "@whc/catalog-sqlite";
import { createCryptoService, createKeyRing } from "@whc/crypto-core";
import { createLogger } from "@whc/logging";
import { createMemoryBus, createMemoryLeases } from "@whc/messaging";
import { createServiceClient, serverInterceptor } from "@whc/rpc";
import { createEnvelopeOpener, createEnvelopeSealer } from "@whc/sealing";
import { tempDir } from "@whc/testing";
import { createEgressGuard, type EgressGuardOptions } from "@whc/egress-guard";
import type { ForwardDeps } from "../forward-attempt.js";
import { createForwardMetrics } from "../forward-metrics.js";

/*
 * Test support for replay-core: real local HTTP destinations, and replay's collaborators run
 * for real (the catalog service over the embedded SQLite store, the crypto service, in-memory
 * leases and bus). Tests call runCleanups() after each test.
 */

export const logger = createLogger("replay-test", "silent");

const cleanups: (() => unknown)[] = [];
export function onCleanup(cleanup: () => unknown): void {
  cleanups.push(cleanup);
}
export async function runCleanups(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}

export interface Received {
  method: string;
  url: string;
  headers: [string, string][];
  body: Buffer;
}

export type Answer = (req: http.IncomingMessage, res: http.ServerResponse, received: Received) => void;

/** A real HTTP server on 127.0.0.1, port 0, recording every request and every connection. */
export async function startTarget(answer: Answer = (_req, res) => res.end("thanks")) {
  const received: Received[] = [];
  let connections = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const headers: [string, string][] = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2) headers.push([req.rawHeaders[i]!, req.rawHeaders[i + 1]!]);
      const got = { method: req.method!, url: req.url!, headers, body: Buffer.concat(chunks) };
      received.push(got);
      answer(req, res, got);
    });
  });
  server.on("connection", () => (connections += 1));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  onCleanup(close);
  return { url: `http://127.0.0.1:${port}`, port, received, connections: () => connections, close };
}

/** A loopback port nothing listens on (a server was there a moment ago). */
export async function refusingPort(): Promise<number> {
  const target = await startTarget();
  await target.close();
  return target.port;
}

export const valuesOf = (headers: [string, string][], name: string) =>
  headers.filter(([n]) => n.toLowerCase() === name.toLowerCase()).map(([, v]) => v);

/** Routes served the way every internal service is: AppErrors leave as ConnectErrors with their reason. */
export function serve(routes: (router: ConnectRouter) => void, interceptors: Interceptor[] = []) {
  return createRouterTransport(routes, { router: { interceptors: [...interceptors, serverInterceptor(logger)] } });
}

export interface BackendOptions {
  slotsPerOrigin?: number;
  catalogInterceptors?: Interceptor[];
  /** The egress guard's: private targets allowed (default true, the destinations are on loopback), a resolver, a connect seam. */
  allowPrivate?: boolean;
  resolver?: EgressGuardOptions["resolver"];
  connect?: EgressGuardOptions["connect"];
}

/**
 * The catalog (SQLite in a temp dir) and crypto services, and everything forwarding takes.
 * `catalogInterceptors` see (and may fail) every catalog call replay makes.
 */
export async function startBackends(options: BackendOptions = {}) {
  const dir = tempDir("whc-replay-");
  const store = openSqliteStore({ file: path.join(dir.path, "catalog.db") });
  onCleanup(async () => {
    await store.close();
    dir.remove();
  });
  const catalog = createServiceClient(CatalogService, serve((r) => r.service(CatalogService, createCatalogService(store)), options.catalogInterceptors));
  const ring = createKeyRing([{ id: "k1", key: randomBytes(32) }], randomBytes(32));
  const crypto = createServiceClient(CryptoService, serve((r) => r.service(CryptoService, createCryptoService(ring))));
  const sealer = createEnvelopeSealer(crypto, { maxAgeMs: 60_000, maxUses: 1000 });
  const opener = createEnvelopeOpener(crypto, { maxAgeMs: 60_000, maxEntries: 100 });
  const leases = createMemoryLeases({ slotsPerOrigin: options.slotsPerOrigin ?? 8, ttlMs: 30_000 });
  const bus = createMemoryBus();
  const metrics = createForwardMetrics(async () => {
    const stats = await catalog.getOutboxStats({});
    return { pending: Number(stats.pending), oldestDueAt: stats.oldestDueAtMs === undefined ? undefined : Number(stats.oldestDueAtMs) };
  });
  const egress = createEgressGuard({ allowPrivate: options.allowPrivate ?? true, resolver: options.resolver, connect: options.connect });
  const deps: ForwardDeps = { catalog, crypto, opener, sealer, leases, logger, metrics, egress };

  const { key } = await catalog.ensureApiKey({ accountName: `acct-${randomUUID()}`, keyHash: randomBytes(32), prefix: "whc_test" });
  const owner = { accountId: key!.accountId, keyId: key!.id };

  async function createEndpoint(fields: Partial<Omit<Endpoint, "$typeName">> = {}, accountId = owner.accountId) {
    const { endpoint } = await catalog.createEndpoint({
      endpoint: {
        accountId,
        slug: `ep-${randomUUID().slice(0, 8)}`,
        displayName: "forward test",
        operatingMode: "relay",
        status: "active",
        replayFromDashboard: true,
        replayFromApi: true,
        provider: "generic",
        source: "api",
        ...fields,
      },
    });
    return endpoint!;
  }

  const sealSecret = async (secret: string) => (await crypto.sealSecret({ plaintext: Buffer.from(secret, "utf8") })).sealed;

  return { store, catalog, crypto, sealer, opener, leases, bus, metrics, deps, owner, createEndpoint, sealSecret };
}

export type Backends = Awaited<ReturnType<typeof startBackends>>;
