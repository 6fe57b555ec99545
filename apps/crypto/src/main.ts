import { loadConfig } from "@whc/config";
import { createLogger } from "@whc/logging";
import { startTracing } from "@whc/telemetry";
import { serveH2c } from "@whc/rpc";
import { createCryptoNode, cryptoSpec, runMain } from "@whc/composition";

runMain("crypto", async () => {
  const config = loadConfig(cryptoSpec, process.env);
  const logger = createLogger("crypto", config.logLevel);
  const tracing = startTracing("crypto", process.env);
  const crypto = createCryptoNode(config, logger);
  const server = await serveH2c({ routes: crypto.routes, port: config.cryptoPort, host: config.host, logger });
  logger.info({ port: server.port, activeKeyId: crypto.activeKeyId }, "crypto ready");
  return { logger, closeables: [server, tracing] };
});
