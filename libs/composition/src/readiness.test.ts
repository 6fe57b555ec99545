import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { loadConfig } from "@whc/config";
import { CatalogService, Health, HealthCheckResponse_ServingStatus as Status } from "@whc/contracts";
import { createLogger } from "@whc/logging";
import { createInMemoryTransport, createServiceClient, watchDependencies } from "@whc/rpc";
import { startNatsServer, tempDir, waitFor, type NatsServer } from "@whc/testing";
import { startTestSystem, type TestSystem } from "./testing/index.js";
import { createCatalogNode } from "./nodes.js";
import { catalogSpec } from "./specs.js";

/**
 * The all-in-one process's readiness when it is given NATS (WHC_NATS_URL): /readyz on both
 * public ports names `nats` while it is down, and the process warns about it at every check.
 */
let nats: NatsServer;
let t: TestSystem;
const lines: Record<string, unknown>[] = [];

beforeAll(async () => {
  nats = await startNatsServer();
  const logger = createLogger("all-in-one", "info", { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  t = await startTestSystem({ WHC_NATS_URL: nats.url, WHC_DEPENDENCY_CHECK_MS: "100" }, logger);
});
afterAll(async () => {
  await t?.stop();
  await nats?.stop();
});

async function readyz(url: string) {
  const res = await fetch(`${url}/readyz`);
  return { status: res.status, body: (await res.json()) as { failing: string[]; checks: Record<string, string> } };
}

describe("all-in-one readiness with NATS", () => {
  it("names nats on /readyz and in a warning every check while NATS is down, and is ready again after", async () => {
    await waitFor(async () => (await readyz(t.gatewayUrl)).status === 200 || undefined, { what: "ready" });
    expect((await readyz(t.ingestUrl)).body.checks).toEqual({ catalog: "ok", crypto: "ok", replay: "ok", nats: "ok" });
    await nats.pause();
    try {
      for (const url of [t.gatewayUrl, t.ingestUrl]) {
        const down = await waitFor(async () => {
          const r = await readyz(url);
          return r.status === 503 ? r : undefined;
        }, { what: `503 at ${url}` });
        expect(down.body.failing).toEqual(["nats"]);
      }
      await waitFor(() => lines.filter((l) => l.msg === "dependency down: nats").length >= 2 || undefined, { what: "warnings" });
      expect(lines.find((l) => l.msg === "dependency down: nats")).toMatchObject({ level: 40, dependency: "nats" });
    } finally {
      await nats.resume();
    }
    await waitFor(async () => (await readyz(t.ingestUrl)).status === 200 || undefined, { what: "ready again", timeoutMs: 20_000 });
  });
});

describe("the catalog's gRPC health", () => {
  it("is NOT_SERVING under both names once its store is gone, and the catalog warns naming it", async () => {
    const dir = tempDir("whc-catalog-health-");
    const warnings: Record<string, unknown>[] = [];
    const logger = createLogger("catalog", "info", { write: (line: string) => void warnings.push(JSON.parse(line) as Record<string, unknown>) });
    const catalog = await createCatalogNode(loadConfig(catalogSpec, { WHC_DATA_DIR: dir.path }), logger, "this-thread");
    const health = createServiceClient(Health, createInMemoryTransport(catalog.routes, logger, 5000));
    const watch = watchDependencies(catalog.readiness, logger, 50);
    try {
      for (const service of ["", CatalogService.typeName]) expect((await health.check({ service })).status).toBe(Status.SERVING);
      await catalog.store.close();
      for (const service of ["", CatalogService.typeName]) expect((await health.check({ service })).status).toBe(Status.NOT_SERVING);
      await waitFor(() => warnings.some((l) => l.msg === "dependency down: store") || undefined, { what: "a warning" });
    } finally {
      await watch.close();
      await catalog.closeable.close();
      dir.remove();
    }
  });
});
