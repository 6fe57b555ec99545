import { loadConfig } from "@whc/config";
import { createLogger } from "@whc/logging";
import { startTracing } from "@whc/telemetry";
import { createCryptoNode, cryptoSpec, internalCredentials, peerSpec, runMain, serveInternal, serveMetrics } from "@whc/composition";

runMain("crypto", async () => {
  const config = loadConfig({ ...cryptoSpec, ...peerSpec }, process.env);
  const credentials = internalCredentials(config);
  const logger = createLogger("crypto", config.logLevel);
  const tracing = startTracing("crypto", process.env);
  // No dependency to watch: the key ring is in memory.
  const crypto = createCryptoNode(config, logger);
  const server = await serveInternal(crypto.routes, config.cryptoPort, config, credentials, logger);
  const metrics = await serveMetrics(config, [], logger);
  logger.info({ port: server.port, host: config.internalHost, metricsPort: metrics?.port, tls: Boolean(credentials.tls), activeKeyId: crypto.activeKeyId }, "crypto ready");
  return { logger, closeables: [server, ...(metrics ? [metrics] : []), tracing] };
});
