import { loadConfig } from "@whc/config";
import { createLogger } from "@whc/logging";
import { startTracing } from "@whc/telemetry";
import { watchDependencies } from "@whc/rpc";
import { createBus, createIngestNode, ingestSpec, internalCredentials, peerSpec, peersOf, runMain, serveMetrics } from "@whc/composition";
import { replayDeadlineMs } from "@whc/ingest-core";

runMain("ingest", async () => {
  const config = loadConfig({ ...ingestSpec, ...peerSpec }, process.env);
  const credentials = internalCredentials(config);
  // Proxy endpoints' calls to replay last up to their forward timeout, beyond WHC_RPC_TIMEOUT_MS.
  const peers = peersOf(config, credentials, replayDeadlineMs(config.rpcTimeoutMs));
  const logger = createLogger("ingest", config.logLevel);
  const tracing = startTracing("ingest", process.env);
  const bus = createBus(config.natsUrl, "whc-ingest", logger);
  const ingest = createIngestNode(config, peers, bus, logger);
  const metrics = await serveMetrics(config, [ingest.registry], logger);
  const server = await ingest.serve(config.ingestPort, config.host);
  const watch = watchDependencies(ingest.readiness, logger, config.dependencyCheckMs);
  logger.info({ port: server.port, metricsPort: metrics?.port, bus: bus.kind }, "ingest ready");
  return { logger, closeables: [watch, server, ...(metrics ? [metrics] : []), bus, tracing] };
});
