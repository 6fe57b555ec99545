import { ConfigError } from "@whc/config";
import type { Logger } from "@whc/logging";
import { Registry, collectDefaultMetrics } from "prom-client";
import { serveHttp, type Closeable } from "./process.js";

/**
 * prom-client's process gauges whose names end in `_total`, which Prometheus keeps for
 * counters (`promtool check metrics` refuses them). Each is the sum of the same gauge without
 * the suffix over its `type` label (`nodejs_active_handles{type="Socket"}`...), which stays.
 */
const MISNAMED_DEFAULTS = ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"];

/** The process's own series (CPU, memory, event loop, GC), once per process. */
export function processMetrics(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  for (const name of MISNAMED_DEFAULTS) registry.removeSingleMetric(name);
  return registry;
}

export interface MetricsPortConfig {
  readonly metricsPort: number;
  readonly internalHost: string;
}

/**
 * `GET /metrics` on WHC_METRICS_PORT, bound on WHC_INTERNAL_HOST like the internal services:
 * the process's own series and those of every service it runs (`registries`), never on a
 * public port. Port 0: no listener. A port already taken stops start-up naming the variable.
 */
export async function serveMetrics(config: MetricsPortConfig, registries: Registry[], logger: Logger): Promise<(Closeable & { port: number }) | undefined> {
  if (config.metricsPort === 0) return undefined;
  const all = Registry.merge([processMetrics(), ...registries]);
  const handler: Parameters<typeof serveHttp>[0] = (req, res) => {
    if ((req.method !== "GET" && req.method !== "HEAD") || (req.url ?? "").split("?", 1)[0] !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("not found: metrics are at /metrics\n");
      return;
    }
    all.metrics().then(
      (text) => {
        res.writeHead(200, { "content-type": all.contentType, "content-length": Buffer.byteLength(text) });
        res.end(req.method === "HEAD" ? undefined : text);
      },
      (err: unknown) => {
        logger.error({ err }, "metrics collection failed");
        res.writeHead(500, { "content-type": "text/plain" });
        res.end("metrics collection failed\n");
      },
    );
  };
  try {
    return await serveHttp(handler, config.metricsPort, config.internalHost);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "error";
    throw new ConfigError("WHC_METRICS_PORT", `cannot be listened on at ${config.internalHost}:${config.metricsPort} (${code}); give each process on one machine its own, or 0 for none`);
  }
}
