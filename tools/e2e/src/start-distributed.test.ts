import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { statSync } from "node:fs";
import path from "node:path";
import {
  apiClient,
  buildApps,
  freePort,
  startNode,
  tempDir,
  testNatsServer,
  waitFor,
  WORKSPACE_ROOT,
  type NatsServer,
  type RunningProcess,
} from "@whc/testing";
import { SERVICES } from "./cluster.js";

/**
 * `npm run start:distributed` (tools/run-distributed.mjs, after its build): the five services
 * on a token it makes, and a service that dies is started again while the others go on.
 */
let nats: NatsServer;
let parent: ReturnType<typeof tempDir>;
let runner: RunningProcess;
let gatewayUrl: string;
let ingestUrl: string;

/** How often a line has appeared in the runner's output so far. */
const count = (pattern: RegExp) => runner.output().match(new RegExp(pattern.source, "gm"))?.length ?? 0;

beforeAll(async () => {
  buildApps(...SERVICES);
  nats = await testNatsServer({ own: false });
  parent = tempDir("whc-e2e-start-distributed-");
  const ports = Object.fromEntries(await Promise.all(SERVICES.map(async (s) => [s, await freePort()] as const)));
  gatewayUrl = `http://127.0.0.1:${ports.gateway}`;
  ingestUrl = `http://127.0.0.1:${ports.ingest}`;
  runner = startNode(path.join(WORKSPACE_ROOT, "tools", "run-distributed.mjs"), {
    WHC_NATS_URL: nats.url,
    // A directory it makes itself (the development key goes there too).
    WHC_DATA_DIR: path.join(parent.path, "data"),
    WHC_HOST: "127.0.0.1",
    WHC_CATALOG_PORT: String(ports.catalog),
    WHC_CRYPTO_PORT: String(ports.crypto),
    WHC_REPLAY_PORT: String(ports.replay),
    WHC_INGEST_PORT: String(ports.ingest),
    WHC_GATEWAY_PORT: String(ports.gateway),
    WHC_CATALOG_URL: `http://127.0.0.1:${ports.catalog}`,
    WHC_CRYPTO_URL: `http://127.0.0.1:${ports.crypto}`,
    WHC_REPLAY_URL: `http://127.0.0.1:${ports.replay}`,
  });
  for (const s of SERVICES) await runner.waitForOutput(new RegExp(`${s} ready`), 30_000);
  await waitFor(async () => (await fetch(`${gatewayUrl}/readyz`)).status === 200 || undefined, { what: "gateway ready" });
});

afterAll(async () => {
  await runner?.stop();
  await nats?.stop();
  parent?.remove();
});

describe("npm run start:distributed", () => {
  it("runs the five services on an internal token of its own, keeping the development key private", async () => {
    const key = (await runner.waitForOutput(/(whc_[A-Za-z0-9]{32,})/))[1]!;
    const api = apiClient(gatewayUrl, key);
    expect((await api.get("/v1/endpoints")).status).toBe(200);
    const dataDir = path.join(parent.path, "data");
    expect((statSync(dataDir).mode & 0o777).toString(8)).toBe("700");
    expect((statSync(path.join(dataDir, "dev-api-key")).mode & 0o777).toString(8)).toBe("600");
    // Its webhook URLs follow WHC_INGEST_PORT without WHC_INGEST_PUBLIC_URL.
    const ep = (await api.post("/v1/endpoints", {})).body as { webhookUrl: string };
    expect(ep.webhookUrl.startsWith(`http://localhost:${new URL(ingestUrl).port}/h/`)).toBe(true);
  });

  it("starts a service that died again, naming it, and the system answers again", async () => {
    const key = (await runner.waitForOutput(/(whc_[A-Za-z0-9]{32,})/))[1]!;
    const api = apiClient(gatewayUrl, key);
    const pid = Number((await runner.waitForOutput(/^catalog +\| started \(pid (\d+)\)$/m))[1]);
    const readyBefore = count(/^catalog +\| .*"msg":"catalog ready"/);
    process.kill(pid, "SIGKILL");
    await runner.waitForOutput(/^catalog +\| exited \(SIGKILL\); restarting catalog in \d+ ms$/m);
    await waitFor(() => count(/^catalog +\| .*"msg":"catalog ready"/) > readyBefore || undefined, { what: "catalog ready again", timeoutMs: 30_000 });
    expect(runner.child.exitCode).toBeNull();

    const ep = (await api.post("/v1/endpoints", { slug: "after-restart" })).body as { id: string; webhookUrl: string };
    const hook = ep.webhookUrl.replace(/^http:\/\/localhost:/, "http://127.0.0.1:");
    const sent = await waitFor(async () => {
      const res = await fetch(hook, { method: "POST", body: "after the restart" });
      return res.status === 200 ? ((await res.json()) as { id: string }) : undefined;
    }, { what: "a capture" });
    const listed = await api.get(`/v1/endpoints/${ep.id}/events`);
    expect(listed.body.items.map((e: { id: string }) => e.id)).toEqual([sent.id]);
    // The others were never stopped.
    for (const s of SERVICES.filter((s) => s !== "catalog")) expect(count(new RegExp(`^${s} +\\| started`)), s).toBe(1);
  });
});
