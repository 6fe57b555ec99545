import { describe, it, expect, afterAll } from "vitest";
import { spawnSync } from "node:child_process";
import { apiClient } from "@whc/testing";
import { startCluster, type Cluster, SERVICES } from "./cluster.js";
import { startSingleProcess, type SingleProcess } from "./single-process.js";

/**
 * Every process's /metrics, on its metrics port, passes Prometheus's own linter (`promtool
 * check metrics`, Debian's `prometheus` package): in the all-in-one process and in each of the
 * five distributed ones, after some traffic. Where promtool is missing the checks are skipped,
 * except in CI (CI=true), where that is a failure: .ci/system-packages installs it.
 */
const PROMTOOL = process.env.WHC_PROMTOOL_BIN ?? "promtool";
const present = spawnSync(PROMTOOL, ["--version"]).error === undefined;
if (!present) console.info(`metrics: ${PROMTOOL} not found; promtool checks skipped (apt-get install prometheus)`);

function needPromtool(skip: () => void): void {
  if (present) return;
  if (process.env.CI === "true") throw new Error(`${PROMTOOL} is missing in CI: .ci/system-packages prometheus`);
  skip();
}

/** promtool's verdict on a scrape: its exit status and what it said (nothing when clean). */
function promtool(text: string): { status: number | null; said: string } {
  const run = spawnSync(PROMTOOL, ["check", "metrics"], { input: text, encoding: "utf8" });
  return { status: run.status, said: `${run.stdout}${run.stderr}`.trim() };
}

async function scrape(metricsUrl: string): Promise<string> {
  const res = await fetch(`${metricsUrl}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text();
}

let single: SingleProcess | undefined;
let cluster: Cluster | undefined;
afterAll(async () => {
  await single?.stop();
  await cluster?.shutdown();
});

/** A capture through ingest and a few API calls, so counters and histograms have samples and labels. */
async function traffic(gatewayUrl: string, api: ReturnType<typeof apiClient>): Promise<void> {
  const ep = (await api.post("/v1/endpoints", {})).body as { id: string; webhookUrl: string };
  expect((await fetch(ep.webhookUrl, { method: "POST", body: '{"type":"x"}' })).status).toBe(200);
  expect((await api.get(`/v1/endpoints/${ep.id}/events`)).status).toBe(200);
  await fetch(`${gatewayUrl}/v1/endpoints/nope`);
}

describe("promtool check metrics", () => {
  it("passes the all-in-one process's /metrics, which holds every service's series and the process's once", async (ctx) => {
    needPromtool(() => ctx.skip());
    single = await startSingleProcess("whc-e2e-metrics-");
    await traffic(single.gatewayUrl, apiClient(single.gatewayUrl, single.firstKey!));
    const text = await scrape(single.metricsUrl);
    for (const series of ["whc_http_requests_total", "whc_ingest_requests_total", "whc_forward_attempts_total", "process_cpu_user_seconds_total"]) {
      expect(text).toContain(series);
    }
    expect(promtool(text)).toEqual({ status: 0, said: "" });
    // Its public ports serve none.
    expect((await fetch(`${single.gatewayUrl}/metrics`)).status).toBe(404);
    expect((await fetch(`${single.ingestUrl}/metrics`)).status).toBe(404);
  });

  it("passes each distributed process's /metrics", async (ctx) => {
    needPromtool(() => ctx.skip());
    cluster = await startCluster();
    await traffic(cluster.gatewayUrl, cluster.api);
    const own = { gateway: "whc_http_requests_total", ingest: "whc_ingest_requests_total", replay: "whc_forward_attempts_total" } as Record<string, string>;
    for (const service of SERVICES) {
      const text = await scrape(cluster.metricsUrls[service]);
      expect(text, service).toContain("process_resident_memory_bytes");
      if (own[service]) expect(text, service).toContain(own[service]);
      expect(promtool(text), service).toEqual({ status: 0, said: "" });
    }
  });

  it("refuses what prom-client's default gauges used to be (so the check above can fail)", async (ctx) => {
    needPromtool(() => ctx.skip());
    const verdict = promtool("# HELP nodejs_active_handles_total Total number of active handles.\n# TYPE nodejs_active_handles_total gauge\nnodejs_active_handles_total 3\n");
    expect(verdict.status).not.toBe(0);
    expect(verdict.said).toContain("nodejs_active_handles_total");
  });
});
