import { describe, it, expect, beforeAll, afterAll } from "vitest";
import fc from "fast-check";
import { hashApiKey } from "@whc/identity";
import { openSqliteStore } from "@whc/catalog-sqlite";
import { startTestSystem, type TestSystem } from "./testing/index.js";

let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem();
});
afterAll(async () => {
  await t.stop();
});

const UUID = "01a20000-0000-7000-8000-000000000000";

describe("tenant isolation", () => {
  it("answers every operation on another account's ids with the same 404 as an unknown id, and changes nothing", async () => {
    const ep = (await t.a.post("/v1/endpoints", { slug: "private" })).body as { id: string; webhookUrl: string };
    const { id: ev } = (await (await fetch(ep.webhookUrl, { method: "POST", body: "mine" })).json()) as { id: string };
    const before = await t.a.get(`/v1/endpoints/${ep.id}`);

    const cases: [string, string, unknown?][] = [
      ["GET", `/v1/endpoints/${ep.id}`],
      ["DELETE", `/v1/endpoints/${ep.id}`],
      ["GET", `/v1/endpoints/${ep.id}/events`],
      ["GET", `/v1/endpoints/${ep.id}/events?search=mine&wait=0`],
      ["GET", `/v1/endpoints/${ep.id}/events/${ev}`],
      ["GET", `/v1/endpoints/${ep.id}/events/${ev}/curl`],
      ["GET", `/v1/endpoints/${ep.id}/events/${ev}/curl?unmasked=true`],
      ["POST", `/v1/endpoints/${ep.id}/events/${ev}/replay`, { target_url: "https://example.test/" }],
      ["DELETE", `/v1/endpoints/${ep.id}/events/${ev}`],
    ];
    for (const [method, path, json] of cases) {
      const foreign = await t.b.call(method, path, json === undefined ? {} : { json });
      const unknown = await t.b.call(method, path.replaceAll(ep.id, UUID).replaceAll(ev, UUID), json === undefined ? {} : { json });
      expect(foreign.status, `${method} ${path}`).toBe(404);
      expect(unknown.status).toBe(404);
      const { requestId: _f, ...foreignBody } = foreign.body;
      const { requestId: _u, ...unknownBody } = unknown.body;
      expect(foreignBody).toEqual(unknownBody);
    }
    const after = await t.a.get(`/v1/endpoints/${ep.id}`);
    expect(after.body).toEqual(before.body);
    const detail = await t.a.get(`/v1/endpoints/${ep.id}/events/${ev}`);
    expect(detail.body.body).toBe("mine");
  });
});

describe("authentication", () => {
  it("refuses a missing header, a wrong scheme, an empty or unknown key, and a revoked key", async () => {
    const variants: Record<string, string>[] = [
      {},
      { authorization: "Basic dXNlcjpwdw==" },
      { authorization: "Bearer" },
      { authorization: "Bearer " },
      { authorization: `Bearer whc_${"Z".repeat(40)}` },
      { authorization: `bearer ${"whc_" + "A".repeat(20) + "1".repeat(20)} extra` },
    ];
    for (const headers of variants) {
      const res = await t.anonymous.get("/v1/endpoints", { headers });
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(res.body).toMatchObject({ error: "unauthorized", message: "A valid API key is required.", details: {} });
    }
    const key = `whc_${"R".repeat(40)}`;
    // A key registered, used, then revoked through the catalog is refused at once.
    const revoked = await startTestSystem({ WHC_BOOTSTRAP_API_KEYS: `temp:${key}` });
    try {
      const api = revoked.anonymous;
      expect((await api.get("/v1/endpoints", { key })).status).toBe(200);
      const store = openSqliteStore({ file: `${revoked.dataDir}/catalog.db` });
      const found = await store.findApiKeyByHash(hashApiKey(key));
      await store.revokeApiKey(found!.id, Date.now());
      await store.close();
      expect((await api.get("/v1/endpoints", { key })).status).toBe(401);
    } finally {
      await revoked.stop();
    }
  });
});

describe("robustness", () => {
  it("never answers 5xx, always with the error shape and no stack or exception text, whatever the request", async () => {
    const ep = (await t.a.post("/v1/endpoints", {})).body as { id: string };
    const segment = fc.oneof(
      fc.constantFrom("v1", "endpoints", "events", "curl", "replay", ep.id, UUID, "..", "%00", "%ZZ", "", "x".repeat(300)),
      fc.string({ maxLength: 12 }).map(encodeURIComponent),
    );
    const query = fc.dictionary(
      fc.constantFrom("limit", "before", "beforeId", "after", "afterId", "from", "to", "wait", "search", "status", "responseCode", "x", "unmasked"),
      fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom("0", "-1", "201", "99999999999", "2026-01-01T00:00:00Z", UUID, "true", "1s")),
      { maxKeys: 4 },
    );
    const body = fc.oneof(
      fc.constant(undefined),
      fc.string({ maxLength: 200 }),
      fc.json(),
      fc.constantFrom('{"slug":"ok-slug"}', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{}}}', "[]", "null", '{"target_url":"x"}'),
    );
    const method = fc.constantFrom("GET", "POST", "DELETE", "PUT", "PATCH", "OPTIONS");
    const contentType = fc.constantFrom(undefined, "application/json", "text/plain", "application/json; charset=utf-8", "multipart/form-data");

    await fc.assert(
      fc.asyncProperty(fc.array(segment, { minLength: 1, maxLength: 7 }), query, body, method, contentType, async (segs, q, b, m, ct) => {
        const qs = new URLSearchParams(q).toString();
        const path = `/${segs.join("/")}${qs ? `?${qs}` : ""}`;
        const headers: Record<string, string> = { authorization: `Bearer ${"whc_" + "A".repeat(20) + "1".repeat(20)}` };
        if (ct) headers["content-type"] = ct;
        const res = await fetch(`${t.gatewayUrl}${path}`, {
          method: m,
          headers,
          body: m === "GET" || m === "OPTIONS" ? undefined : b,
        });
        const text = await res.text();
        expect(res.status, `${m} ${path}`).toBeLessThan(500);
        expect(res.headers.get("x-request-id")).toBeTruthy();
        if (res.status >= 400) {
          const reply = JSON.parse(text) as Record<string, unknown>;
          expect(Object.keys(reply).sort()).toEqual(["details", "error", "message", "requestId"]);
          expect(typeof reply.details).toBe("object");
          expect(reply.requestId).toBe(res.headers.get("x-request-id"));
          expect(text).not.toMatch(/\bat .*\(.*:\d+:\d+\)|Error:|TypeError|SyntaxError|ZodError|sqlite/i);
        }
      }),
      { numRuns: 300 },
    );
  }, 120_000);
});

describe("operations surface", () => {
  it("serves Prometheus metrics by route template on the metrics port, and none on the public ports", async () => {
    await t.a.get("/v1/endpoints");
    const text = await (await fetch(`${t.metricsUrl}/metrics`)).text();
    expect(text).toMatch(/whc_http_requests_total\{method="GET",route="\/v1\/endpoints",status="200"\} \d+/);
    expect(text).toContain("whc_http_request_duration_seconds_bucket");
    expect(text).not.toMatch(/route="\/v1\/endpoints\/[0-9a-f]{8}-/);
    // One process, one set of process series, none named like a counter without being one.
    expect(text.match(/^# TYPE process_cpu_user_seconds_total counter$/gm)).toHaveLength(1);
    expect(text).not.toMatch(/^# TYPE \S+_total gauge$/m);
    expect((await fetch(`${t.gatewayUrl}/metrics`)).status).toBe(404);
    expect((await fetch(`${t.ingestUrl}/metrics`)).status).toBe(404);
  });

  it("answers /readyz on both public ports: 200 with every dependency by name", async () => {
    for (const url of [t.gatewayUrl, t.ingestUrl]) {
      const res = await fetch(`${url}/readyz`);
      expect(res.status, url).toBe(200);
      expect(await res.json()).toEqual({ status: "ok", checks: { catalog: "ok", crypto: "ok", replay: "ok" }, failing: [] });
    }
  });

  it("serves the OpenAPI document without credentials, numbered 0.1.0", async () => {
    const doc = (await (await fetch(`${t.gatewayUrl}/v1/openapi.json`)).json()) as Record<string, any>;
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.version).toBe("0.1.0");
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/v1/endpoints", "/v1/endpoints/{endpointId}/events"]));
    expect(doc.components.schemas.CreateEndpointRequest.properties.secret["x-extension"]).toBe(true);
  });
});
