import { randomBytes } from "node:crypto";
import { loadInternalCredentials, type InternalCredentials } from "@whc/rpc";
import {
  apiClient,
  buildApps,
  createOpenApiValidator,
  externalServices,
  freePort,
  mongoTestDatabase,
  startNode,
  tempDir,
  testNatsServer,
  waitFor,
  type ApiClient,
  type NatsServer,
  type RunningProcess,
} from "@whc/testing";

export const SERVICES = ["catalog", "crypto", "replay", "ingest", "gateway"] as const;
export type Service = (typeof SERVICES)[number];
export const CLUSTER_KEY = `whc_${"D".repeat(20)}${"7".repeat(20)}`;

export interface Cluster {
  nats: NatsServer;
  gatewayUrl: string;
  ingestUrl: string;
  api: ApiClient;
  procs: Record<Service, RunningProcess>;
  /** What every service is started with (each also gets its own WHC_METRICS_PORT). */
  env: Record<string, string>;
  /** The deployment's internal credentials, for a test that calls a service itself. */
  credentials: InternalCredentials;
  /** Where each service's internal port and metrics port answer. */
  internalUrls: Record<"catalog" | "crypto" | "replay", string>;
  metricsUrls: Record<Service, string>;
  /** Stops one service (SIGKILL or SIGTERM) and returns its exit code. */
  stop(service: Service, signal?: NodeJS.Signals): Promise<number | null>;
  /** Starts a stopped service again with the same environment and waits until it is ready. */
  start(service: Service): Promise<void>;
  /**
   * Starts one more instance of a service on its own port (scale-out; catalogs share the
   * store); `env` overrides the cluster's for it (another catalog's URL, say).
   */
  extra(service: "catalog" | "gateway" | "ingest" | "replay", env?: Record<string, string>): Promise<{ url: string; proc: RunningProcess }>;
  shutdown(): Promise<void>;
}

/**
 * The five services as real processes on free loopback ports, with their own nats-server and the
 * embedded catalog; or, when the run is given servers (WHC_NATS_URL, WHC_TEST_MONGODB_URI: the CI
 * workflow's service containers), with that NATS and a fresh database on that MongoDB.
 * `ownNats`: a private nats-server whatever the environment (a test that pauses NATS). Internal
 * calls carry a token made for the run; with WHC_INTERNAL_TLS_* in `extraEnv`, they go over
 * mutual TLS (https: URLs). Internal ports bind the default WHC_INTERNAL_HOST.
 */
export async function startCluster(extraEnv: Record<string, string> = {}, options: { ownNats?: boolean } = {}): Promise<Cluster> {
  const mains = buildApps(...SERVICES);
  const nats = await testNatsServer({ own: options.ownNats ?? false });
  const { mongodbUri } = externalServices();
  const mongo = mongodbUri ? mongoTestDatabase(mongodbUri, "whc_e2e_") : undefined;
  const dir = tempDir("whc-e2e-cluster-");
  const ports = Object.fromEntries(await Promise.all(SERVICES.map(async (s) => [s, await freePort()] as const))) as Record<
    Service,
    number
  >;
  const metricsPorts = Object.fromEntries(await Promise.all(SERVICES.map(async (s) => [s, await freePort()] as const))) as Record<
    Service,
    number
  >;
  const gatewayUrl = `http://127.0.0.1:${ports.gateway}`;
  const ingestUrl = `http://127.0.0.1:${ports.ingest}`;
  const scheme = extraEnv.WHC_INTERNAL_TLS_CERT ? "https" : "http";
  const internalUrls = {
    catalog: `${scheme}://127.0.0.1:${ports.catalog}`,
    crypto: `${scheme}://127.0.0.1:${ports.crypto}`,
    replay: `${scheme}://127.0.0.1:${ports.replay}`,
  };
  const env: Record<string, string> = {
    WHC_HOST: "127.0.0.1",
    WHC_INTERNAL_TOKEN: randomBytes(32).toString("hex"),
    WHC_DATA_DIR: dir.path,
    WHC_NATS_URL: nats.url,
    ...(mongo ? { WHC_MONGODB_URI: mongo.uri } : {}),
    WHC_BOOTSTRAP_API_KEYS: `dist:${CLUSTER_KEY}`,
    WHC_CATALOG_PORT: String(ports.catalog),
    WHC_CRYPTO_PORT: String(ports.crypto),
    WHC_REPLAY_PORT: String(ports.replay),
    WHC_INGEST_PORT: String(ports.ingest),
    WHC_GATEWAY_PORT: String(ports.gateway),
    WHC_CATALOG_URL: internalUrls.catalog,
    WHC_CRYPTO_URL: internalUrls.crypto,
    WHC_REPLAY_URL: internalUrls.replay,
    WHC_INGEST_PUBLIC_URL: ingestUrl,
    ...extraEnv,
  };
  const credentials = loadInternalCredentials({
    internalToken: env.WHC_INTERNAL_TOKEN,
    internalTlsCert: env.WHC_INTERNAL_TLS_CERT,
    internalTlsKey: env.WHC_INTERNAL_TLS_KEY,
    internalTlsCa: env.WHC_INTERNAL_TLS_CA,
  });
  const procs = {} as Record<Service, RunningProcess>;
  const extras: RunningProcess[] = [];
  const start = async (s: Service) => {
    procs[s] = startNode(mains[s]!, { ...env, WHC_METRICS_PORT: String(metricsPorts[s]) });
    await procs[s].waitForOutput(new RegExp(`${s} ready`));
  };
  try {
    await Promise.all(SERVICES.map(start));
    await waitFor(async () => (await fetch(`${gatewayUrl}/healthz`)).status === 200 || undefined, { what: "gateway health" });
    await waitFor(async () => (await fetch(`${ingestUrl}/healthz`)).status === 200 || undefined, { what: "ingest health" });
  } catch (err) {
    // A start that fails leaves nothing running: no test would ever stop what it started.
    await Promise.all(Object.values(procs).map((p) => p.stop("SIGKILL")));
    await nats.stop();
    await mongo?.drop();
    dir.remove();
    throw err;
  }
  const doc = (await (await fetch(`${gatewayUrl}/v1/openapi.json`)).json()) as Record<string, unknown>;
  return {
    nats,
    gatewayUrl,
    ingestUrl,
    api: apiClient(gatewayUrl, CLUSTER_KEY, createOpenApiValidator(doc)),
    procs,
    env,
    credentials,
    internalUrls,
    metricsUrls: Object.fromEntries(SERVICES.map((s) => [s, `http://127.0.0.1:${metricsPorts[s]}`])) as Record<Service, string>,
    stop: (s, signal = "SIGTERM") => procs[s].stop(signal),
    start,
    async extra(service, overrides = {}) {
      const port = await freePort();
      const variable = { catalog: "WHC_CATALOG_PORT", gateway: "WHC_GATEWAY_PORT", ingest: "WHC_INGEST_PORT", replay: "WHC_REPLAY_PORT" }[service];
      const proc = startNode(mains[service]!, { ...env, ...overrides, [variable]: String(port) });
      extras.push(proc);
      await proc.waitForOutput(new RegExp(`${service} ready`));
      return { url: `${service === "catalog" || service === "replay" ? scheme : "http"}://127.0.0.1:${port}`, proc };
    },
    async shutdown() {
      await Promise.all([...SERVICES.map((s) => procs[s].stop()), ...extras.map((p) => p.stop())]);
      await nats.stop();
      await mongo?.drop();
      dir.remove();
    },
  };
}

/** The cluster scaled out: `n` catalogs, ingests and gateways, the first of each the cluster's own. */
export interface Replicas {
  catalogUrls: string[];
  ingestUrls: string[];
  gatewayUrls: string[];
  /** One API client per gateway, in order. */
  apis: ApiClient[];
}

/**
 * Starts n - 1 more catalogs, ingests and gateways; the i-th ingest and gateway call the i-th
 * catalog (with the embedded store every catalog opens the one file in the data directory,
 * with MongoDB the one database). Crypto and replay stay single; NATS carries every
 * endpoint-change notice to every ingest. They stop with the cluster.
 */
export async function scaleOut(cluster: Cluster, n: number): Promise<Replicas> {
  const catalogUrls = [cluster.env.WHC_CATALOG_URL!];
  for (let i = 1; i < n; i += 1) catalogUrls.push((await cluster.extra("catalog")).url);
  const ingestUrls = [cluster.ingestUrl];
  const gatewayUrls = [cluster.gatewayUrl];
  for (let i = 1; i < n; i += 1) {
    const calls = { WHC_CATALOG_URL: catalogUrls[i]! };
    const [ingest, gateway] = await Promise.all([cluster.extra("ingest", calls), cluster.extra("gateway", calls)]);
    ingestUrls.push(ingest.url);
    gatewayUrls.push(gateway.url);
  }
  const doc = (await (await fetch(`${cluster.gatewayUrl}/v1/openapi.json`)).json()) as Record<string, unknown>;
  const apis = gatewayUrls.map((url, i) => (i === 0 ? cluster.api : apiClient(url, CLUSTER_KEY, createOpenApiValidator(doc))));
  return { catalogUrls, ingestUrls, gatewayUrls, apis };
}
