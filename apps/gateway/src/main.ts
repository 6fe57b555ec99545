import { loadConfig } from "@whc/config";
import { createLogger } from "@whc/logging";
import { startTracing } from "@whc/telemetry";
import { createPeerTransport } from "@whc/rpc";
import { createBus, createGatewayNode, gatewaySpec, runMain } from "@whc/composition";

runMain("gateway", async () => {
  const config = loadConfig(gatewaySpec, process.env);
  const logger = createLogger("gateway", config.logLevel);
  const tracing = startTracing("gateway", process.env);
  const peers = {
    catalog: createPeerTransport(config.catalogUrl, config.rpcTimeoutMs),
    crypto: createPeerTransport(config.cryptoUrl, config.rpcTimeoutMs),
    replay: createPeerTransport(config.replayUrl, config.rpcTimeoutMs),
  };
  const bus = createBus(config.natsUrl, "whc-gateway", logger);
  const server = await createGatewayNode(config, peers, bus, logger).serve(config.gatewayPort, config.host);
  logger.info({ port: server.port, bus: bus.kind }, "gateway ready");
  return { logger, closeables: [server, bus, tracing] };
});
