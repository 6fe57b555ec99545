import { createClient } from "@connectrpc/connect";
import { CatalogService } from "@whc/contracts";
import { loadConfig } from "@whc/config";
import { createLogger } from "@whc/logging";
import { createInMemoryTransport } from "@whc/rpc";
import { ensureFirstKey } from "@whc/identity";
import {
  allInOneSpec,
  createBus,
  createCatalogNode,
  createCryptoNode,
  createGatewayNode,
  createIngestNode,
  createReplayNode,
  runMain,
  serveHttp,
} from "@whc/composition";

// Every service in one process: internal calls go through Connect's in-memory transport,
// the catalog is the embedded store, notifications and leases stay in the process.
runMain("webhook-capture", async () => {
  const config = loadConfig(allInOneSpec, process.env);
  const logger = createLogger("all-in-one", config.logLevel);
  const catalog = await createCatalogNode(config, logger);
  const crypto = createCryptoNode(config, logger);
  const replay = createReplayNode(config, logger);
  const peer = (routes: typeof catalog.routes) => createInMemoryTransport(routes, logger, config.rpcTimeoutMs);
  const peers = { catalog: peer(catalog.routes), crypto: peer(crypto.routes), replay: peer(replay.routes) };
  const bus = createBus(config.natsUrl, "whc-all-in-one", logger);
  const firstKey = await ensureFirstKey(createClient(CatalogService, peers.catalog));
  const ingest = await serveHttp(createIngestNode(config, peers, bus, logger).handler, config.ingestPort, config.host);
  const gateway = await serveHttp(createGatewayNode(config, peers, bus, logger).app.callback(), config.gatewayPort, config.host);
  logger.info({ gatewayPort: gateway.port, ingestPort: ingest.port, dataDir: config.dataDir }, "webhook-capture ready");
  if (firstKey) {
    process.stdout.write(
      `\nFirst start: created account "default" with API key\n\n    ${firstKey}\n\n` +
        `It is shown this once. Try: curl -H "Authorization: Bearer ${firstKey}" http://localhost:${gateway.port}/v1/endpoints\n\n`,
    );
  }
  return { logger, closeables: [gateway, ingest, bus, catalog.closeable] };
});
