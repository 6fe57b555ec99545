import {
  boolSetting,
  intSetting,
  optionalStringSetting,
  pairListSetting,
  portSetting,
  stringSetting,
  urlSetting,
  enumSetting,
} from "./config.js";

/**
 * Every variable the services read, with its default. Apps pick the ones they need; this
 * file is also the source of the README's configuration table.
 */
export const settings = {
  gatewayPort: portSetting("WHC_GATEWAY_PORT", "HTTP port of the gateway (/v1, /healthz)", 8080),
  ingestPort: portSetting("WHC_INGEST_PORT", "HTTP port of ingest (the webhookUrl surface)", 8081),
  catalogPort: portSetting("WHC_CATALOG_PORT", "h2c port of the catalog service", 50051),
  cryptoPort: portSetting("WHC_CRYPTO_PORT", "h2c port of the crypto service", 50052),
  replayPort: portSetting("WHC_REPLAY_PORT", "h2c port of the replay service", 50053),
  host: stringSetting("WHC_HOST", "address every listener binds", "0.0.0.0"),
  catalogUrl: urlSetting("WHC_CATALOG_URL", "where the catalog service answers", "http://127.0.0.1:50051", ["http:"]),
  cryptoUrl: urlSetting("WHC_CRYPTO_URL", "where the crypto service answers", "http://127.0.0.1:50052", ["http:"]),
  replayUrl: urlSetting("WHC_REPLAY_URL", "where the replay service answers", "http://127.0.0.1:50053", ["http:"]),
  ingestPublicUrl: urlSetting(
    "WHC_INGEST_PUBLIC_URL",
    "public base of every webhookUrl",
    "http://localhost:8081",
    ["http:", "https:"],
  ),
  dataDir: stringSetting("WHC_DATA_DIR", "directory of the embedded store and generated keys", "./data"),
  mongodbUri: optionalStringSetting("WHC_MONGODB_URI", "set: the catalog uses MongoDB instead of the embedded store"),
  mongodbWriteConcern: stringSetting("WHC_MONGODB_WRITE_CONCERN", "MongoDB write concern w", "majority"),
  natsUrl: optionalStringSetting("WHC_NATS_URL", "set: NATS carries capture notifications and egress leases"),
  bootstrapApiKeys: pairListSetting(
    "WHC_BOOTSTRAP_API_KEYS",
    "accounts and keys created at start-up, idempotently",
    /whc_[A-Za-z0-9]{32,}/,
    "whc_ key",
  ),
  masterKeys: pairListSetting(
    "WHC_MASTER_KEYS",
    "master key ring id:base64(32 bytes),...; the first is active (unset: generated under WHC_DATA_DIR)",
    /[A-Za-z0-9+/=]{43,44}/,
    "base64 32-byte key",
  ),
  blindIndexKey: optionalStringSetting(
    "WHC_BLIND_INDEX_KEY",
    "base64 32-byte key of the search blind index (unset: generated under WHC_DATA_DIR)",
  ),
  replayDailyLimit: intSetting("WHC_REPLAY_DAILY_LIMIT", "replays per account per UTC day", 1000, 0, 100_000_000),
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
  retentionDays: intSetting("WHC_RETENTION_DAYS", "events older than this are purged", 30, 1, 36_500),
  maxStoredBodyBytes: intSetting("WHC_MAX_STORED_BODY_BYTES", "bodies over this are stored truncated", 1_048_576, 0, 1 << 30),
  maxInboundBodyBytes: intSetting(
    "WHC_MAX_INBOUND_BODY_BYTES",
    "bodies over this get 413 and only metadata is stored",
    10_485_760,
    1,
    1 << 30,
  ),
  trustedProxies: stringSetting("WHC_TRUSTED_PROXIES", "comma-separated proxy addresses whose X-Forwarded-For is trusted", ""),
  dataKeyTtlS: intSetting(
    "WHC_DATA_KEY_TTL_S",
    "how long ingest seals with one data key, and readers keep an unwrapped one, seconds",
    300,
    1,
    86_400,
  ),
  endpointCacheTtlMs: intSetting("WHC_ENDPOINT_CACHE_TTL_MS", "how long ingest caches an endpoint lookup", 5000, 0, 600_000),
  dashboardDir: stringSetting("WHC_DASHBOARD_DIR", "built dashboard the gateway serves at /", "dist/dashboard"),
  logLevel: enumSetting("WHC_LOG_LEVEL", "log level", ["trace", "debug", "info", "warn", "error", "silent"], "info"),
  rpcTimeoutMs: intSetting("WHC_RPC_TIMEOUT_MS", "deadline of each internal call, milliseconds", 10_000, 100, 600_000),
} as const;
