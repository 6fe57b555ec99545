import { loadConfig } from "@whc/config";
import { createLogger } from "@whc/logging";
import { createPeerTransport, serveH2c } from "@whc/rpc";
import { createLeases, createReplayNode, replaySpec, runMain } from "@whc/composition";

runMain("replay", async () => {
  const config = loadConfig(replaySpec, process.env);
  const logger = createLogger("replay", config.logLevel);
  const peers = {
    catalog: createPeerTransport(config.catalogUrl, config.rpcTimeoutMs),
    crypto: createPeerTransport(config.cryptoUrl, config.rpcTimeoutMs),
  };
  const replay = createReplayNode(config, peers, createLeases(config, "whc-replay", logger), logger);
  const server = await serveH2c({ routes: replay.routes, port: config.replayPort, host: config.host, logger });
  logger.info({ port: server.port }, "replay ready");
  return { logger, closeables: [server, replay.closeable] };
});
