import { settings as s } from "@whc/config";

/** The settings each node reads; the all-in-one process reads their union. */
export const catalogSpec = {
  host: s.host,
  catalogPort: s.catalogPort,
  dataDir: s.dataDir,
  mongodbUri: s.mongodbUri,
  mongodbWriteConcern: s.mongodbWriteConcern,
  bootstrapApiKeys: s.bootstrapApiKeys,
  retentionDays: s.retentionDays,
  quotaEndpoints: s.quotaEndpoints,
  listenerTtlS: s.listenerTtlS,
  logLevel: s.logLevel,
};

export const cryptoSpec = {
  host: s.host,
  cryptoPort: s.cryptoPort,
  dataDir: s.dataDir,
  masterKeys: s.masterKeys,
  blindIndexKey: s.blindIndexKey,
  logLevel: s.logLevel,
};

export const ingestSpec = {
  host: s.host,
  ingestPort: s.ingestPort,
  catalogUrl: s.catalogUrl,
  cryptoUrl: s.cryptoUrl,
  replayUrl: s.replayUrl,
  natsUrl: s.natsUrl,
  maxStoredBodyBytes: s.maxStoredBodyBytes,
  maxInboundBodyBytes: s.maxInboundBodyBytes,
  ingestMaxInflightBytes: s.ingestMaxInflightBytes,
  trustedProxies: s.trustedProxies,
  dataKeyTtlS: s.dataKeyTtlS,
  endpointCacheTtlMs: s.endpointCacheTtlMs,
  secretGraceS: s.secretGraceS,
  ingestPublicUrl: s.ingestPublicUrl,
  rpcTimeoutMs: s.rpcTimeoutMs,
  logLevel: s.logLevel,
};

export const gatewaySpec = {
  host: s.host,
  gatewayPort: s.gatewayPort,
  catalogUrl: s.catalogUrl,
  cryptoUrl: s.cryptoUrl,
  replayUrl: s.replayUrl,
  natsUrl: s.natsUrl,
  ingestPublicUrl: s.ingestPublicUrl,
  replayDailyLimit: s.replayDailyLimit,
  quotaApiRps: s.quotaApiRps,
  quotaWaitsPerKey: s.quotaWaitsPerKey,
  dashboardDir: s.dashboardDir,
  dataKeyTtlS: s.dataKeyTtlS,
  rpcTimeoutMs: s.rpcTimeoutMs,
  logLevel: s.logLevel,
};

export const replaySpec = {
  host: s.host,
  replayPort: s.replayPort,
  catalogUrl: s.catalogUrl,
  cryptoUrl: s.cryptoUrl,
  natsUrl: s.natsUrl,
  replayDailyLimit: s.replayDailyLimit,
  replayAllowPrivateTargets: s.replayAllowPrivateTargets,
  egressSlotsPerOrigin: s.egressSlotsPerOrigin,
  egressLeaseTtlS: s.egressLeaseTtlS,
  replayConnectTimeoutMs: s.replayConnectTimeoutMs,
  replayTimeoutMs: s.replayTimeoutMs,
  forwardRetryBaseMs: s.forwardRetryBaseMs,
  forwardPollMs: s.forwardPollMs,
  forwardClaimMs: s.forwardClaimMs,
  dataKeyTtlS: s.dataKeyTtlS,
  rpcTimeoutMs: s.rpcTimeoutMs,
  logLevel: s.logLevel,
};

export const allInOneSpec = {
  ...catalogSpec,
  ...cryptoSpec,
  ...ingestSpec,
  ...gatewaySpec,
  ...replaySpec,
};
