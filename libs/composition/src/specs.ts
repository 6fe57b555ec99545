import { settings as s } from "@whc/config";

/** What every process reads: its metrics port and internal host, logs, how often it checks its dependencies. */
const processSpec = {
  internalHost: s.internalHost,
  metricsPort: s.metricsPort,
  dependencyCheckMs: s.dependencyCheckMs,
  logLevel: s.logLevel,
};

/**
 * What a distributed service adds: the credentials of its internal calls (required token,
 * optional mutual TLS). The all-in-one process wires its services in memory and reads none.
 */
export const peerSpec = {
  internalToken: s.internalToken,
  internalTlsCert: s.internalTlsCert,
  internalTlsKey: s.internalTlsKey,
  internalTlsCa: s.internalTlsCa,
};

/** The settings each node reads; the all-in-one process reads their union. */
export const catalogSpec = {
  ...processSpec,
  catalogPort: s.catalogPort,
  dataDir: s.dataDir,
  mongodbUri: s.mongodbUri,
  mongodbWriteConcern: s.mongodbWriteConcern,
  bootstrapApiKeys: s.bootstrapApiKeys,
  retentionDays: s.retentionDays,
  auditRetentionDays: s.auditRetentionDays,
  keyRetentionDays: s.keyRetentionDays,
  quotaEndpoints: s.quotaEndpoints,
  quotaKeys: s.quotaKeys,
  listenerTtlS: s.listenerTtlS,
  listenerStallS: s.listenerStallS,
  alertCoalesceS: s.alertCoalesceS,
  quotaRedeliveryJobs: s.quotaRedeliveryJobs,
  redeliveryMaxDeliveries: s.redeliveryMaxDeliveries,
};

export const cryptoSpec = {
  ...processSpec,
  cryptoPort: s.cryptoPort,
  dataDir: s.dataDir,
  masterKeys: s.masterKeys,
  blindIndexKey: s.blindIndexKey,
};

export const ingestSpec = {
  ...processSpec,
  host: s.host,
  ingestPort: s.ingestPort,
  catalogUrl: s.catalogUrl,
  cryptoUrl: s.cryptoUrl,
  replayUrl: s.replayUrl,
  natsUrl: s.natsUrl,
  maxStoredBodyBytes: s.maxStoredBodyBytes,
  maxInboundBodyBytes: s.maxInboundBodyBytes,
  ingestMaxInflightBytes: s.ingestMaxInflightBytes,
  ingestMaxInflightBytesPerPeer: s.ingestMaxInflightBytesPerPeer,
  ingestMaxInflightBytesPerEndpoint: s.ingestMaxInflightBytesPerEndpoint,
  ingestBodyIdleMs: s.ingestBodyIdleMs,
  trustedProxies: s.trustedProxies,
  dataKeyTtlS: s.dataKeyTtlS,
  endpointCacheTtlMs: s.endpointCacheTtlMs,
  secretGraceS: s.secretGraceS,
  ingestPublicUrl: s.ingestPublicUrl,
  maxHops: s.maxHops,
  schemaLearning: s.schemaLearning,
  rpcTimeoutMs: s.rpcTimeoutMs,
};

export const gatewaySpec = {
  ...processSpec,
  host: s.host,
  gatewayPort: s.gatewayPort,
  catalogUrl: s.catalogUrl,
  cryptoUrl: s.cryptoUrl,
  replayUrl: s.replayUrl,
  natsUrl: s.natsUrl,
  ingestPublicUrl: s.ingestPublicUrl,
  ingestInternalUrl: s.ingestInternalUrl,
  replayDailyLimit: s.replayDailyLimit,
  quotaApiRps: s.quotaApiRps,
  quotaWaitsPerKey: s.quotaWaitsPerKey,
  exportIdleS: s.exportIdleS,
  trustedProxies: s.trustedProxies,
  dashboardDir: s.dashboardDir,
  dataKeyTtlS: s.dataKeyTtlS,
  rpcTimeoutMs: s.rpcTimeoutMs,
};

export const replaySpec = {
  ...processSpec,
  replayPort: s.replayPort,
  catalogUrl: s.catalogUrl,
  cryptoUrl: s.cryptoUrl,
  natsUrl: s.natsUrl,
  replayDailyLimit: s.replayDailyLimit,
  replayAllowPrivateTargets: s.replayAllowPrivateTargets,
  egressSlotsPerOrigin: s.egressSlotsPerOrigin,
  egressLeaseTtlS: s.egressLeaseTtlS,
  egressKeepIdleMs: s.egressKeepIdleMs,
  replayConnectTimeoutMs: s.replayConnectTimeoutMs,
  replayTimeoutMs: s.replayTimeoutMs,
  forwardRetryBaseMs: s.forwardRetryBaseMs,
  forwardPollMs: s.forwardPollMs,
  forwardClaimMs: s.forwardClaimMs,
  redeliveryPageSize: s.redeliveryPageSize,
  redeliveryWindow: s.redeliveryWindow,
  dataKeyTtlS: s.dataKeyTtlS,
  rpcTimeoutMs: s.rpcTimeoutMs,
};

export const allInOneSpec = {
  ...catalogSpec,
  ...cryptoSpec,
  ...ingestSpec,
  ...gatewaySpec,
  ...replaySpec,
};
