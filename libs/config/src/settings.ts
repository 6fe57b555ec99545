import {
  BASE64_32_BYTES,
  boolSetting,
  dirSetting,
  enumSetting,
  fileSetting,
  hostSetting,
  intSetting,
  ipListSetting,
  keySetting,
  mongoUriSetting,
  natsServerSetting,
  pairListSetting,
  portSetting,
  shareOfSetting,
  tokenSetting,
  urlSetting,
  writeConcernSetting,
} from "./kinds.js";

const ingestPort = portSetting("WHC_INGEST_PORT", "HTTP port of ingest (the webhookUrl surface)", 8081);

const maxInboundBodyBytes = intSetting(
  "WHC_MAX_INBOUND_BODY_BYTES",
  "bodies over this get 413 and only metadata is stored",
  10_485_760,
  1,
  1 << 30,
);
const ingestMaxInflightBytes = intSetting(
  "WHC_INGEST_MAX_INFLIGHT_BYTES",
  "most request-body bytes ingest holds across all requests in flight; a request past it gets 503 overloaded",
  268_435_456,
  1,
  2 ** 40,
);

/** Internal calls go over TLS once a certificate is configured: the services' URLs then default to https:. */
function internalUrl(name: string, description: string, port: number) {
  const plain = `http://127.0.0.1:${port}`;
  return urlSetting(name, description, plain, ["http:", "https:"], {
    defaultFrom: (env) => (env.WHC_INTERNAL_TLS_CERT?.trim() ? `https://127.0.0.1:${port}` : plain),
  });
}

/**
 * Every variable the services read, with its default. Apps pick the ones they need; this
 * file is also the source of the README's configuration table.
 */
export const settings = {
  gatewayPort: portSetting("WHC_GATEWAY_PORT", "HTTP port of the gateway (/v1, /healthz, /readyz)", 8080),
  ingestPort,
  catalogPort: portSetting("WHC_CATALOG_PORT", "h2c port of the catalog service", 50051),
  cryptoPort: portSetting("WHC_CRYPTO_PORT", "h2c port of the crypto service", 50052),
  replayPort: portSetting("WHC_REPLAY_PORT", "h2c port of the replay service", 50053),
  metricsPort: portSetting("WHC_METRICS_PORT", "HTTP port of /metrics (Prometheus), on WHC_INTERNAL_HOST; 0: no metrics listener", 9464),
  host: hostSetting("WHC_HOST", "IP address or hostname the public listeners (gateway, ingest) bind", "0.0.0.0"),
  internalHost: hostSetting(
    "WHC_INTERNAL_HOST",
    "IP address or hostname the internal listeners (catalog, crypto, replay, metrics) bind",
    "127.0.0.1",
  ),
  catalogUrl: internalUrl("WHC_CATALOG_URL", "where the catalog service answers", 50051),
  cryptoUrl: internalUrl("WHC_CRYPTO_URL", "where the crypto service answers", 50052),
  replayUrl: internalUrl("WHC_REPLAY_URL", "where the replay service answers", 50053),
  internalToken: tokenSetting(
    "WHC_INTERNAL_TOKEN",
    "shared secret every internal call carries; required by the distributed services",
  ),
  internalTlsCert: fileSetting("WHC_INTERNAL_TLS_CERT", "PEM certificate this process presents on internal calls, as server and client"),
  internalTlsKey: fileSetting("WHC_INTERNAL_TLS_KEY", "PEM private key of WHC_INTERNAL_TLS_CERT"),
  internalTlsCa: fileSetting("WHC_INTERNAL_TLS_CA", "PEM CA certificate(s) internal peers' certificates must be signed by"),
  ingestPublicUrl: urlSetting(
    "WHC_INGEST_PUBLIC_URL",
    "public base of every webhookUrl",
    "http://localhost:<WHC_INGEST_PORT>",
    ["http:", "https:"],
    { defaultFrom: (env) => `http://localhost:${ingestPort.parse(env.WHC_INGEST_PORT)}` },
  ),
  ingestInternalUrl: urlSetting(
    "WHC_INGEST_INTERNAL_URL",
    "where the gateway reaches ingest to deliver triggered samples (unset: the all-in-one process's own listener, else WHC_INGEST_PUBLIC_URL)",
    undefined,
    ["http:", "https:"],
  ),
  dataDir: dirSetting("WHC_DATA_DIR", "directory of the embedded store and generated keys", "./data"),
  mongodbUri: mongoUriSetting("WHC_MONGODB_URI", "set: the catalog uses MongoDB instead of the embedded store"),
  mongodbWriteConcern: writeConcernSetting("WHC_MONGODB_WRITE_CONCERN", "MongoDB write concern w: majority or a number", "majority"),
  natsUrl: natsServerSetting("WHC_NATS_URL", "set: NATS (one server) carries capture notifications and egress leases"),
  bootstrapApiKeys: pairListSetting(
    "WHC_BOOTSTRAP_API_KEYS",
    "accounts and keys created at start-up, idempotently",
    /whc_[A-Za-z0-9]{32,}/,
    "whc_ key",
  ),
  masterKeys: pairListSetting(
    "WHC_MASTER_KEYS",
    "master key ring id:base64(32 bytes),...; the first is active (unset: generated under WHC_DATA_DIR)",
    BASE64_32_BYTES,
    "base64 32-byte key",
    { distinct: true },
  ),
  blindIndexKey: keySetting(
    "WHC_BLIND_INDEX_KEY",
    "base64 32-byte key of the search blind index (unset: generated under WHC_DATA_DIR)",
  ),
  replayDailyLimit: intSetting("WHC_REPLAY_DAILY_LIMIT", "replays per account per UTC day", 1000, 0, 100_000_000),
  quotaEndpoints: intSetting(
    "WHC_QUOTA_ENDPOINTS",
    "endpoints per account; a create past it gets 429 quota_exceeded",
    1000,
    1,
    10_000_000,
  ),
  listenerTtlS: intSetting(
    "WHC_LISTENER_TTL_S",
    "how long after its last heartbeat a running whc listen is gone from the endpoint's listeners, seconds",
    30,
    1,
    3600,
  ),
  quotaApiRps: intSetting(
    "WHC_QUOTA_API_RPS",
    "API requests per second per key, in each gateway process (burst: twice as many)",
    50,
    1,
    1_000_000,
  ),
  quotaWaitsPerKey: intSetting(
    "WHC_QUOTA_WAITS_PER_KEY",
    "concurrent wait long polls per key, in each gateway process",
    20,
    1,
    100_000,
  ),
  replayAllowPrivateTargets: boolSetting(
    "WHC_REPLAY_ALLOW_PRIVATE_TARGETS",
    "allow replays to private, loopback and link-local addresses",
    false,
  ),
  egressSlotsPerOrigin: intSetting("WHC_EGRESS_SLOTS_PER_ORIGIN", "concurrent replays per target origin", 8, 1, 1024),
  egressLeaseTtlS: intSetting("WHC_EGRESS_LEASE_TTL_S", "lifetime of an egress lease, seconds", 30, 1, 3600),
  replayConnectTimeoutMs: intSetting("WHC_REPLAY_CONNECT_TIMEOUT_MS", "replay: time to connect (and TLS) to a target", 3000, 100, 60_000),
  replayTimeoutMs: intSetting(
    "WHC_REPLAY_TIMEOUT_MS",
    "replay: time for the whole request to a target (keep below WHC_RPC_TIMEOUT_MS)",
    8000,
    100,
    300_000,
  ),
  forwardRetryBaseMs: intSetting(
    "WHC_FORWARD_RETRY_BASE_MS",
    "relay: delay before the first retry of a failed delivery (then x3 each time, +-20 %)",
    10_000,
    1,
    3_600_000,
  ),
  forwardPollMs: intSetting("WHC_FORWARD_POLL_MS", "relay: how often the outbox is looked at for due retries", 1000, 10, 60_000),
  forwardClaimMs: intSetting(
    "WHC_FORWARD_CLAIM_MS",
    "relay: how long a claimed delivery is hidden from other replay processes (after a crash: its retry delay)",
    120_000,
    100,
    3_600_000,
  ),
  retentionDays: intSetting("WHC_RETENTION_DAYS", "events older than this are purged", 30, 1, 36_500),
  auditRetentionDays: intSetting("WHC_AUDIT_RETENTION_DAYS", "audit log entries older than this are purged", 365, 1, 36_500),
  maxStoredBodyBytes: intSetting("WHC_MAX_STORED_BODY_BYTES", "bodies over this are stored truncated", 1_048_576, 0, 1 << 30),
  maxInboundBodyBytes,
  ingestMaxInflightBytes,
  ingestMaxInflightBytesPerPeer: shareOfSetting(
    "WHC_INGEST_MAX_INFLIGHT_BYTES_PER_PEER",
    "most of the in-flight bytes one remote address may hold; past it 503 overloaded (never below WHC_MAX_INBOUND_BODY_BYTES)",
    ingestMaxInflightBytes,
    4,
    maxInboundBodyBytes,
  ),
  ingestMaxInflightBytesPerEndpoint: shareOfSetting(
    "WHC_INGEST_MAX_INFLIGHT_BYTES_PER_ENDPOINT",
    "most of the in-flight bytes the requests to one endpoint may hold; past it 503 overloaded (never below WHC_MAX_INBOUND_BODY_BYTES)",
    ingestMaxInflightBytes,
    2,
    maxInboundBodyBytes,
  ),
  ingestBodyIdleMs: intSetting(
    "WHC_INGEST_BODY_IDLE_MS",
    "a request body from which nothing arrives for this long is cut with 408 and its reservation released; also how long a refused body may pause while it is drained, milliseconds",
    10_000,
    50,
    600_000,
  ),
  trustedProxies: ipListSetting(
    "WHC_TRUSTED_PROXIES",
    "comma-separated IP addresses of the proxies whose X-Forwarded-For is trusted (no ranges)",
  ),
  dataKeyTtlS: intSetting(
    "WHC_DATA_KEY_TTL_S",
    "how long ingest seals with one data key, and readers keep an unwrapped one, seconds",
    300,
    1,
    86_400,
  ),
  endpointCacheTtlMs: intSetting("WHC_ENDPOINT_CACHE_TTL_MS", "how long ingest caches an endpoint lookup", 5000, 0, 600_000),
  maxHops: intSetting(
    "WHC_MAX_HOPS",
    "a capture arriving with this many forwards behind it (X-Whc-Hop) is answered 508 forward_loop, stored and not forwarded",
    3,
    1,
    100,
  ),
  schemaLearning: boolSetting(
    "WHC_SCHEMA_LEARNING",
    "ingest reads each JSON body's shape (paths and types, no value) for the catalog to learn schemas and flag drift",
    true,
  ),
  secretGraceS: intSetting(
    "WHC_SECRET_GRACE_S",
    "after a secret changes, how long the previous one still verifies, seconds",
    86_400,
    0,
    31_536_000,
  ),
  dashboardDir: dirSetting("WHC_DASHBOARD_DIR", "built dashboard the gateway serves at /", "dist/dashboard"),
  logLevel: enumSetting("WHC_LOG_LEVEL", "log level", ["trace", "debug", "info", "warn", "error", "silent"], "info"),
  rpcTimeoutMs: intSetting("WHC_RPC_TIMEOUT_MS", "deadline of each internal call, milliseconds", 10_000, 100, 600_000),
  dependencyCheckMs: intSetting(
    "WHC_DEPENDENCY_CHECK_MS",
    "how often each process checks its dependencies, logging a warning for each one down, milliseconds",
    10_000,
    50,
    3_600_000,
  ),
} as const;
