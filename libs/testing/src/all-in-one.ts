import { freePort, waitFor } from "./ports.js";
import { startNode, type RunningProcess } from "./processes.js";

export interface AllInOne {
  proc: RunningProcess;
  /** Its whole environment: start it again with `startNode(main, env)` on the same data. */
  env: Record<string, string>;
  gatewayUrl: string;
  ingestUrl: string;
  /** Its metrics port: GET /metrics there. */
  metricsUrl: string;
}

/**
 * The built all-in-one process over `dataDir`, on free loopback ports, once its gateway answers
 * /healthz. `env` adds to (or overrides) the variables it is started with.
 */
export async function startAllInOne(main: string, dataDir: string, env: Record<string, string> = {}): Promise<AllInOne> {
  const [gatewayPort, ingestPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const ingestUrl = `http://127.0.0.1:${ingestPort}`;
  const fullEnv: Record<string, string> = {
    WHC_DATA_DIR: dataDir,
    WHC_HOST: "127.0.0.1",
    WHC_GATEWAY_PORT: String(gatewayPort),
    WHC_INGEST_PORT: String(ingestPort),
    WHC_METRICS_PORT: String(metricsPort),
    WHC_INGEST_PUBLIC_URL: ingestUrl,
    WHC_LOG_LEVEL: "warn",
    ...env,
  };
  const proc = startNode(main, fullEnv);
  try {
    await waitFor(async () => (await fetch(`${gatewayUrl}/healthz`).catch(() => undefined))?.ok || undefined, { what: "the all-in-one gateway" });
  } catch (err) {
    // Nothing left running when the start fails.
    await proc.stop("SIGKILL");
    throw err;
  }
  return { proc, env: fullEnv, gatewayUrl, ingestUrl, metricsUrl: `http://127.0.0.1:${fullEnv.WHC_METRICS_PORT}` };
}
