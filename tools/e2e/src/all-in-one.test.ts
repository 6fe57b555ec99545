import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { statSync } from "node:fs";
import path from "node:path";
import { apiClient, buildApps, createOpenApiValidator, startAllInOne, startNode, tempDir, type OpenApiValidator } from "@whc/testing";
import { startSingleProcess, type SingleProcess } from "./single-process.js";
import { walkReadmePath } from "./walkthrough.js";

let aio: SingleProcess;
let gatewayUrl: string;
let key: string;
let validator: OpenApiValidator;

beforeAll(async () => {
  aio = await startSingleProcess("whc-e2e-aio-");
  gatewayUrl = aio.gatewayUrl;
  key = aio.firstKey!;
  // Every answer below is checked against the OpenAPI document this process serves.
  validator = createOpenApiValidator((await (await fetch(`${gatewayUrl}/v1/openapi.json`)).json()) as Record<string, unknown>);
});

afterAll(async () => {
  await aio?.stop();
});

describe("all-in-one process (npm start)", () => {
  it("prints a first key once and walks the README path with it", async () => {
    await walkReadmePath(apiClient(gatewayUrl, key, validator));
  });

  it("keeps endpoints, events and keys across a restart, and prints no new key", async () => {
    const api = apiClient(gatewayUrl, key, validator);
    const ep = (await api.post("/v1/endpoints", { slug: "survivor" })).body as { id: string; webhookUrl: string };
    const sent = (await (await fetch(ep.webhookUrl, { method: "POST", body: "kept" })).json()) as { id: string };
    expect(await aio.proc.stop("SIGTERM")).toBe(0);

    aio.proc = startNode(aio.main, aio.env);
    await aio.proc.waitForOutput(/webhook-capture ready/);
    expect(aio.proc.output()).not.toMatch(/whc_[A-Za-z0-9]{32,}/);
    const detail = await api.get(`/v1/endpoints/${ep.id}/events/${sent.id}`);
    expect(detail.status).toBe(200);
    expect(detail.body.body).toBe("kept");
  });
});

describe("all-in-one data files", () => {
  it("are created 0600 in a data directory created 0700: the catalog, its -wal and -shm, the key ring", async () => {
    const { "all-in-one": main } = buildApps("all-in-one");
    const parent = tempDir("whc-e2e-modes-");
    // A directory the process makes itself, under the usual umask (022: 0644 files, 0755 directories).
    const dataDir = path.join(parent.path, "fresh", "data");
    const started = await startAllInOne(main!, dataDir);
    try {
      const first = (await started.proc.waitForOutput(/(whc_[A-Za-z0-9]{32,})/))[1]!;
      const ep = (await apiClient(started.gatewayUrl, first).post("/v1/endpoints", {})).body as { webhookUrl: string };
      expect((await fetch(ep.webhookUrl, { method: "POST", body: "on disk" })).status).toBe(200);
      const mode = (p: string) => (statSync(p).mode & 0o777).toString(8);
      expect(mode(dataDir)).toBe("700");
      for (const file of ["catalog.db", "catalog.db-wal", "catalog.db-shm", "keyring.json"]) {
        expect(mode(path.join(dataDir, file)), file).toBe("600");
      }
    } finally {
      await started.proc.stop();
      parent.remove();
    }
  });
});
