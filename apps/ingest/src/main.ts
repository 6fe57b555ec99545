import { loadConfig } from "@whc/config";
import { createLogger } from "@whc/logging";
import { startTracing } from "@whc/telemetry";
import { createPeerTransport } from "@whc/rpc";
import { createBus, createIngestNode, ingestSpec, runMain } from "@whc/composition";
import { replayDeadlineMs } from "@whc/ingest-core";

runMain("ingest", async () => {
  const config = loadConfig(ingestSpec, process.env);
  const logger = createLogger("ingest", config.logLevel);
  const tracing = startTracing("ingest", process.env);
  const peers = {
    catalog: createPeerTransport(config.catalogUrl, config.rpcTimeoutMs),
    crypto: createPeerTransport(config.cryptoUrl, config.rpcTimeoutMs),
    replay: createPeerTransport(config.replayUrl, replayDeadlineMs(config.rpcTimeoutMs)),
  };
  const bus = createBus(config.natsUrl, "whc-ingest", logger);
  const server = await createIngestNode(config, peers, bus, logger).serve(config.ingestPort, config.host);
  logger.info({ port: server.port, bus: bus.kind }, "ingest ready");
  return { logger, closeables: [server, bus, tracing] };
});
