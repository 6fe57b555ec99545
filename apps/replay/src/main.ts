import { loadConfig } from "@whc/config";
import { createLogger } from "@whc/logging";
import { serveH2c } from "@whc/rpc";
import { createReplayNode, replaySpec, runMain } from "@whc/composition";

runMain("replay", async () => {
  const config = loadConfig(replaySpec, process.env);
  const logger = createLogger("replay", config.logLevel);
  const replay = createReplayNode(config, logger);
  const server = await serveH2c({ routes: replay.routes, port: config.replayPort, host: config.host, logger });
  logger.info({ port: server.port }, "replay ready");
  return { logger, closeables: [server] };
});
