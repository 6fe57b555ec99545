import { loadConfig } from "@whc/config";
import { createLogger } from "@whc/logging";
import { startTracing } from "@whc/telemetry";
import { serveH2c } from "@whc/rpc";
import { catalogSpec, createCatalogNode, runMain } from "@whc/composition";

runMain("catalog", async () => {
  const config = loadConfig(catalogSpec, process.env);
  const logger = createLogger("catalog", config.logLevel);
  const tracing = startTracing("catalog", process.env);
  // The process serves only the store's calls: the embedded store runs on its event loop.
  const catalog = await createCatalogNode(config, logger, "this-thread");
  const server = await serveH2c({ routes: catalog.routes, port: config.catalogPort, host: config.host, logger });
  logger.info({ port: server.port, store: catalog.store.kind }, "catalog ready");
  return { logger, closeables: [server, catalog.closeable, tracing] };
});
