// Writes the OpenAPI document the gateway serves at GET /v1/openapi.json, without starting
// anything: `npm run -s openapi:document -- FILE` (stdout without FILE). .ci/openapi-lint lints it.
// The receiving operations' server is WHC_INGEST_PUBLIC_URL, read as the gateway reads it.
import { writeFileSync } from "node:fs";
import { loadConfig, settings } from "@whc/config";
import { buildOpenApiDocument, gatewayRoutes, type GatewayDeps } from "@whc/gateway-core";

/**
 * The document needs the route table's declarations, not its collaborators: a stand-in that
 * any property read returns, and that throws if a handler ever calls it.
 */
const unwired: GatewayDeps = new Proxy(function unwired() {}, {
  get: (_target, property) => (property === "then" ? undefined : unwired),
  apply: () => {
    throw new Error("the OpenAPI generator runs no handler");
  },
}) as unknown as GatewayDeps;

const { ingestPublicUrl } = loadConfig({ ingestPublicUrl: settings.ingestPublicUrl }, process.env);
const options = { ingestPublicUrl, replayDailyLimit: 0, waitPollMs: 0, quotas: { apiRps: 0, waitsPerKey: 0 } };
const text = `${JSON.stringify(buildOpenApiDocument(gatewayRoutes(unwired, options), options), null, 2)}\n`;
const file = process.argv[2];
if (file) writeFileSync(file, text);
else process.stdout.write(text);
