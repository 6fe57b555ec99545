import { loadConfig } from "@whc/config";
import { createLogger } from "@whc/logging";
import { startTracing } from "@whc/telemetry";
import { allInOneSpec, runMain, startAllInOne } from "@whc/composition";

runMain("webhook-capture", async () => {
  const config = loadConfig(allInOneSpec, process.env);
  const logger = createLogger("all-in-one", config.logLevel);
  const tracing = startTracing("all-in-one", process.env);
  const system = await startAllInOne(config, logger);
  const { gateway, ingest, metrics, firstKey } = system;
  logger.info({ gatewayPort: gateway.port, ingestPort: ingest.port, metricsPort: metrics?.port, dataDir: config.dataDir }, "webhook-capture ready");
  if (firstKey) {
    process.stdout.write(
      `\nFirst start: created account "default" with API key\n\n    ${firstKey}\n\n` +
        `It is shown this once. Try: curl -H "Authorization: Bearer ${firstKey}" http://localhost:${gateway.port}/v1/endpoints\n` +
        `or open the dashboard at http://localhost:${gateway.port}/ and paste it.\n\n`,
    );
  }
  return { logger, closeables: [...system.closeables, tracing] };
});
