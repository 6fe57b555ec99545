import { describe, it, expect, beforeAll, afterAll } from "vitest";
import {
  apiClient,
  buildApps,
  createOpenApiValidator,
  freePort,
  startNode,
  tempDir,
  type OpenApiValidator,
  type RunningProcess,
} from "@whc/testing";
import { walkReadmePath } from "./walkthrough.js";

let proc: RunningProcess;
let dir: ReturnType<typeof tempDir>;
let gatewayUrl: string;
let key: string;
let validator: OpenApiValidator;
const env: Record<string, string> = {};

beforeAll(async () => {
  const { "all-in-one": main } = buildApps("all-in-one");
  dir = tempDir("whc-e2e-aio-");
  const [gatewayPort, ingestPort] = [await freePort(), await freePort()];
  Object.assign(env, {
    WHC_DATA_DIR: dir.path,
    WHC_HOST: "127.0.0.1",
    WHC_GATEWAY_PORT: String(gatewayPort),
    WHC_INGEST_PORT: String(ingestPort),
    WHC_INGEST_PUBLIC_URL: `http://127.0.0.1:${ingestPort}`,
  });
  proc = startNode(main!, env);
  key = (await proc.waitForOutput(/(whc_[A-Za-z0-9]{32,})/))[1]!;
  await proc.waitForOutput(/webhook-capture ready/);
  gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  // Every answer below is checked against the OpenAPI document this process serves.
  validator = createOpenApiValidator((await (await fetch(`${gatewayUrl}/v1/openapi.json`)).json()) as Record<string, unknown>);
});

afterAll(async () => {
  await proc?.stop();
  dir?.remove();
});

describe("all-in-one process (npm start)", () => {
  it("prints a first key once and walks the README path with it", async () => {
    await walkReadmePath(apiClient(gatewayUrl, key, validator));
  });

  it("keeps endpoints, events and keys across a restart, and prints no new key", async () => {
    const api = apiClient(gatewayUrl, key, validator);
    const ep = (await api.post("/v1/endpoints", { slug: "survivor" })).body as { id: string; webhookUrl: string };
    const sent = (await (await fetch(ep.webhookUrl, { method: "POST", body: "kept" })).json()) as { id: string };
    expect(await proc.stop("SIGTERM")).toBe(0);

    const { "all-in-one": main } = buildApps("all-in-one");
    proc = startNode(main!, env);
    await proc.waitForOutput(/webhook-capture ready/);
    expect(proc.output()).not.toMatch(/whc_[A-Za-z0-9]{32,}/);
    const detail = await api.get(`/v1/endpoints/${ep.id}/events/${sent.id}`);
    expect(detail.status).toBe(200);
    expect(detail.body.body).toBe("kept");
  });
});
