import { loadConfig } from "@whc/config";
import { createLogger } from "@whc/logging";
import { startTracing } from "@whc/telemetry";
import { watchDependencies } from "@whc/rpc";
import { createBus, createLeases, createReplayNode, internalCredentials, peerSpec, peersOf, replaySpec, runMain, serveInternal, serveMetrics } from "@whc/composition";

runMain("replay", async () => {
  const config = loadConfig({ ...replaySpec, ...peerSpec }, process.env);
  const credentials = internalCredentials(config);
  const peers = peersOf(config, credentials);
  const logger = createLogger("replay", config.logLevel);
  const tracing = startTracing("replay", process.env);
  const bus = createBus(config.natsUrl, "whc-replay", logger);
  const replay = createReplayNode(config, peers, createLeases(config, "whc-replay", logger), bus, logger);
  const server = await serveInternal(replay.routes, config.replayPort, config, credentials, logger);
  const metrics = await serveMetrics(config, [replay.registry], logger);
  const watch = watchDependencies(replay.readiness, logger, config.dependencyCheckMs);
  logger.info({ port: server.port, host: config.internalHost, metricsPort: metrics?.port, tls: Boolean(credentials.tls), owner: replay.forwarder.owner }, "replay ready");
  return { logger, closeables: [watch, server, ...(metrics ? [metrics] : []), replay.closeable, bus, tracing] };
});
