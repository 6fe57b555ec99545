import { loadConfig } from "@whc/config";
import { createLogger } from "@whc/logging";
import { startTracing } from "@whc/telemetry";
import { watchDependencies } from "@whc/rpc";
import { catalogSpec, createCatalogNode, internalCredentials, peerSpec, runMain, serveInternal, serveMetrics } from "@whc/composition";

runMain("catalog", async () => {
  const config = loadConfig({ ...catalogSpec, ...peerSpec }, process.env);
  const credentials = internalCredentials(config);
  const logger = createLogger("catalog", config.logLevel);
  const tracing = startTracing("catalog", process.env);
  // The process serves only the store's calls: the embedded store runs on its event loop.
  const catalog = await createCatalogNode(config, logger, "this-thread");
  const server = await serveInternal(catalog.routes, config.catalogPort, config, credentials, logger);
  const metrics = await serveMetrics(config, [], logger);
  const watch = watchDependencies(catalog.readiness, logger, config.dependencyCheckMs);
  logger.info({ port: server.port, host: config.internalHost, metricsPort: metrics?.port, tls: Boolean(credentials.tls), store: catalog.store.kind }, "catalog ready");
  return { logger, closeables: [watch, server, ...(metrics ? [metrics] : []), catalog.closeable, tracing] };
});
