import { loadConfig } from "@whc/config";
import { createLogger, type Logger } from "@whc/logging";
import { apiClient, createOpenApiValidator, freePort, tempDir, type ApiClient } from "@whc/testing";
import { allInOneSpec } from "../specs.js";
import { startAllInOne, type AllInOne } from "../all-in-one.js";

export const KEY_A = `whc_${"A".repeat(20)}${"1".repeat(20)}`;
export const KEY_B = `whc_${"B".repeat(20)}${"2".repeat(20)}`;

export interface TestSystem {
  system: AllInOne;
  gatewayUrl: string;
  ingestUrl: string;
  /** The process's metrics port (/metrics of every service in it). */
  metricsUrl: string;
  dataDir: string;
  a: ApiClient;
  b: ApiClient;
  anonymous: ApiClient;
  stop(): Promise<void>;
}

/**
 * The all-in-one system on free loopback ports with two accounts, for tests over real HTTP.
 * Its logs go nowhere unless a test passes a logger to read them. Each key may make 10,000
 * calls a second unless `env` sets WHC_QUOTA_API_RPS.
 */
export async function startTestSystem(env: Record<string, string> = {}, logger?: Logger): Promise<TestSystem> {
  const dir = tempDir("whc-system-");
  const [gatewayPort, ingestPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  const config = loadConfig(allInOneSpec, {
    WHC_HOST: "127.0.0.1",
    WHC_GATEWAY_PORT: String(gatewayPort),
    WHC_INGEST_PORT: String(ingestPort),
    WHC_METRICS_PORT: String(metricsPort),
    WHC_INGEST_PUBLIC_URL: `http://127.0.0.1:${ingestPort}`,
    WHC_DATA_DIR: dir.path,
    WHC_BOOTSTRAP_API_KEYS: `acct-a:${KEY_A},acct-b:${KEY_B}`,
    WHC_LOG_LEVEL: "silent",
    // Tests make many calls with one key at once; the tests of the rate set their own.
    WHC_QUOTA_API_RPS: "10000",
    ...env,
  });
  const system = await startAllInOne(config, logger ?? createLogger("test", "silent"));
  const gatewayUrl = `http://127.0.0.1:${system.gateway.port}`;
  const doc = (await (await fetch(`${gatewayUrl}/v1/openapi.json`)).json()) as Record<string, unknown>;
  const validator = createOpenApiValidator(doc);
  return {
    system,
    gatewayUrl,
    ingestUrl: `http://127.0.0.1:${system.ingest.port}`,
    metricsUrl: `http://127.0.0.1:${metricsPort}`,
    dataDir: dir.path,
    a: apiClient(gatewayUrl, KEY_A, validator),
    b: apiClient(gatewayUrl, KEY_B, validator),
    anonymous: apiClient(gatewayUrl, undefined, validator),
    async stop() {
      await system.close();
      dir.remove();
    },
  };
}
