import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { randomUUID } from "node:crypto";
import { createOpenApiValidator, type OpenApiValidator } from "@whc/testing";
import { startTestSystem, type TestSystem } from "./testing/index.js";

/**
 * The receiving surface answers as the gateway's OpenAPI document says it does: each answer
 * a sender can get from ingest, checked against the `/h/{endpointId}` operations of the
 * document the gateway serves (status documented, JSON body matching its schema).
 */
let t: TestSystem;
let validate: OpenApiValidator;
let receivingServer: string;
let receiving: Record<string, any>;

beforeAll(async () => {
  t = await startTestSystem({ WHC_MAX_INBOUND_BODY_BYTES: "5000" });
  const doc = (await (await fetch(`${t.gatewayUrl}/v1/openapi.json`)).json()) as Record<string, any>;
  validate = createOpenApiValidator(doc);
  receiving = doc.paths["/h/{endpointId}"];
  receivingServer = receiving.post.servers[0].url as string;
});
afterAll(async () => {
  await t.stop();
});

/**
 * Sends to ingest at the receiving operations' server and checks the answer against the
 * document: its own status's entry, or (`configured`: an answer the endpoint chose) the
 * operation's `default`.
 */
async function send(endpointId: string, init: RequestInit = {}, configured = false) {
  const url = `${receivingServer}/h/${endpointId}`;
  const res = await fetch(url, init);
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = text;
  }
  const method = init.method ?? "GET";
  if (!configured) expect(receiving[method.toLowerCase()].responses[String(res.status)], `${method} -> ${res.status}`).toBeDefined();
  validate(method, url, res.status, res.headers, body);
  return { status: res.status, headers: res.headers, body: body as Record<string, unknown> };
}

async function endpoint(body: Record<string, unknown> = {}): Promise<{ id: string; webhookUrl: string }> {
  const res = await t.a.post("/v1/endpoints", body);
  expect(res.status).toBe(201);
  return res.body;
}

describe("the receiving surface, as the OpenAPI document describes it", () => {
  it("is served where the document says: every webhookUrl is on the receiving operations' server", async () => {
    const ep = await endpoint();
    expect(receivingServer).toBe(t.ingestUrl);
    expect(ep.webhookUrl).toBe(`${receivingServer}/h/${ep.id}`);
  });

  it("answers every documented method 200 with the id of an event /v1 then shows", async () => {
    const ep = await endpoint();
    for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE"]) {
      const res = await send(ep.id, { method, ...(["GET", "DELETE"].includes(method) ? {} : { body: "{}" }) });
      expect(res.status, method).toBe(200);
      expect(res.body.ok).toBe(true);
      expect((await t.a.get(`/v1/endpoints/${ep.id}/events/${String(res.body.id)}`)).status).toBe(200);
    }
  });

  it("answers an unknown endpoint, and a part after /h/ that is no UUID, 404 not_found", async () => {
    expect((await send(randomUUID(), { method: "POST", body: "x" })).body).toMatchObject({ ok: false, error: "not_found" });
    expect((await send("not-a-uuid")).status).toBe(404);
  });

  it("answers a paused endpoint 503 endpoint_paused with Retry-After", async () => {
    const ep = await endpoint({ status: "paused" });
    const res = await send(ep.id, { method: "POST", body: "x" });
    expect(res.status).toBe(503);
    expect(res.body.error).toBe("endpoint_paused");
    expect(res.headers.get("retry-after")).toBe("60");
  });

  it("answers a body over the inbound limit 413 payload_too_large, naming the event that keeps its metadata", async () => {
    const ep = await endpoint();
    const res = await send(ep.id, { method: "POST", body: "x".repeat(6000) });
    expect(res.status).toBe(413);
    expect(res.body.error).toBe("payload_too_large");
    expect((await t.a.get(`/v1/endpoints/${ep.id}/events/${String(res.body.id)}`)).body.responseCode).toBe(413);
  });

  it("answers a request forwarded WHC_MAX_HOPS times 508 forward_loop, naming the event stored", async () => {
    const ep = await endpoint();
    const res = await send(ep.id, { method: "POST", body: "{}", headers: { "X-Whc-Hop": "3" } });
    expect(res.status).toBe(508);
    expect(res.body.error).toBe("forward_loop");
    expect((await t.a.get(`/v1/endpoints/${ep.id}/events/${String(res.body.id)}`)).body.responseCode).toBe(508);
  });

  it("answers what the endpoint configures, as the document's default answer", async () => {
    const ep = await endpoint({ response: { status: 202, body: "accepted {{eventId}}" } });
    const res = await send(ep.id, { method: "POST", body: "{}" }, true);
    expect(res.status).toBe(202);
    expect(String(res.body)).toMatch(/^accepted [0-9a-f-]{36}$/);
  });
});
