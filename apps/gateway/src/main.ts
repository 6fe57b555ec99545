import { loadConfig } from "@whc/config";
import { createLogger } from "@whc/logging";
import { startTracing } from "@whc/telemetry";
import { watchDependencies } from "@whc/rpc";
import { createBus, createGatewayNode, gatewaySpec, internalCredentials, peerSpec, peersOf, runMain, serveMetrics } from "@whc/composition";

runMain("gateway", async () => {
  const config = loadConfig({ ...gatewaySpec, ...peerSpec }, process.env);
  const credentials = internalCredentials(config);
  const peers = peersOf(config, credentials);
  const logger = createLogger("gateway", config.logLevel);
  const tracing = startTracing("gateway", process.env);
  const bus = createBus(config.natsUrl, "whc-gateway", logger);
  const gateway = createGatewayNode(config, peers, bus, logger);
  const metrics = await serveMetrics(config, [gateway.registry], logger);
  const server = await gateway.serve(config.gatewayPort, config.host);
  const watch = watchDependencies(gateway.readiness, logger, config.dependencyCheckMs);
  logger.info({ port: server.port, metricsPort: metrics?.port, bus: bus.kind }, "gateway ready");
  return { logger, closeables: [watch, server, ...(metrics ? [metrics] : []), bus, tracing] };
});
