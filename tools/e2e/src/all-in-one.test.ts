import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { apiClient, createOpenApiValidator, startNode, type OpenApiValidator } from "@whc/testing";
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
