import { loadConfig } from "@whc/config";
import { createLogger } from "@whc/logging";
import { startTracing } from "@whc/telemetry";
import { createPeerTransport, serveH2c } from "@whc/rpc";
import { createBus, createLeases, createReplayNode, replayMetricsFallback, replaySpec, runMain } from "@whc/composition";

runMain("replay", async () => {
  const config = loadConfig(replaySpec, process.env);
  const logger = createLogger("replay", config.logLevel);
  const tracing = startTracing("replay", process.env);
  const peers = {
    catalog: createPeerTransport(config.catalogUrl, config.rpcTimeoutMs),
    crypto: createPeerTransport(config.cryptoUrl, config.rpcTimeoutMs),
  };
  const bus = createBus(config.natsUrl, "whc-replay", logger);
  const replay = createReplayNode(config, peers, createLeases(config, "whc-replay", logger), bus, logger);
  const fallback = replayMetricsFallback(replay.metrics, logger);
  const server = await serveH2c({ routes: replay.routes, port: config.replayPort, host: config.host, logger, fallback });
  logger.info({ port: server.port, owner: replay.forwarder.owner }, "replay ready");
  return { logger, closeables: [server, replay.closeable, bus, tracing] };
});
