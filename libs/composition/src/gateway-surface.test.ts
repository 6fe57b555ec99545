import { describe, it, expect, beforeAll, afterAll } from "vitest";
import fc from "fast-check";
import { hashApiKey } from "@whc/identity";
import { openSqliteStore } from "@whc/catalog-sqlite";
import { waitFor } from "@whc/testing";
import { KEY_A, startTestSystem, type TestSystem } from "./testing/index.js";

let t: TestSystem;
let openApi: Record<string, any>;
beforeAll(async () => {
  t = await startTestSystem();
  openApi = (await (await fetch(`${t.gatewayUrl}/v1/openapi.json`)).json()) as Record<string, any>;
});
afterAll(async () => {
  await t.stop();
});

const UUID = "01a20000-0000-7000-8000-000000000000";

const LISTENER = "01a20000-0000-7000-8000-00000000beef";

/** The route template a concrete path is an instance of: `/v1/endpoints/{endpointId}/events/{eventId}`. */
function template(path: string, endpointId: string, eventId: string, keyId: string, channelId: string, jobId: string): string {
  const t = path
    .split("?")[0]!
    .replaceAll(jobId, "{jobId}")
    .replaceAll(eventId, "{eventId}")
    .replaceAll(endpointId, "{endpointId}")
    .replaceAll(LISTENER, "{listenerId}")
    .replaceAll(keyId, "{id}")
    .replaceAll(channelId, "{id}")
    .replace(/\/schemas\/[^/]+$/, "/schemas/{eventType}");
  // The endpoint's own operations name its id {id}.
  return t === "/v1/endpoints/{endpointId}" ? "/v1/endpoints/{id}" : t;
}

/** Every documented gateway operation whose path holds an id (the receiving surface, /h/, is ingest's). */
function idRoutes(): Set<string> {
  const out = new Set<string>();
  for (const [path, item] of Object.entries(openApi.paths as Record<string, Record<string, unknown>>)) {
    if (!path.includes("{") || !path.startsWith("/v1/")) continue;
    for (const method of Object.keys(item)) if (method !== "parameters") out.add(`${method.toUpperCase()} ${path}`);
  }
  return out;
}

describe("tenant isolation", () => {
  it("answers every operation on another account's ids with the same 404 as an unknown id, and changes nothing", async () => {
    const ep = (await t.a.post("/v1/endpoints", { slug: "private" })).body as { id: string; webhookUrl: string };
    const { id: ev } = (await (await fetch(ep.webhookUrl, { method: "POST", body: "mine" })).json()) as { id: string };
    // A JSON capture, so that the endpoint has a learned schema (design §19) to keep to itself.
    await fetch(ep.webhookUrl, { method: "POST", headers: { "content-type": "application/json" }, body: '{"private_field":1}' });
    await waitFor(async () => (await t.a.get(`/v1/endpoints/${ep.id}/schemas`)).body.items?.length === 1);
    const heartbeat = { host: "owner-laptop", startedAt: new Date().toISOString(), cursor: null, lastError: null };
    expect((await t.a.call("PUT", `/v1/endpoints/${ep.id}/listeners/${LISTENER}`, { json: heartbeat })).status).toBe(200);
    const aKey = (await t.a.post("/v1/keys", { name: "a's reader", scopes: ["events:read"] })).body as { id: string; key: string };
    const channel = (await t.a.post("/v1/alert-channels", { name: "a's alerts", type: "slack", url: "https://hooks.slack.example.test/services/a", events: ["test"] })).body as { id: string };
    // A destination, and a bulk redelivery job of the endpoint (design §18): nothing to redo, so done at once.
    const patched = await t.a.call("PATCH", `/v1/endpoints/${ep.id}`, { json: { destinations: [{ name: "mine", url: "https://owner.example.test/hooks" }] } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const job = (await t.a.post(`/v1/endpoints/${ep.id}/redeliveries`, { filter: {} })).body as { id: string; state: string };
    expect(job.state).toBe("done");
    const before = await t.a.get(`/v1/endpoints/${ep.id}`);

    // Every route that takes an endpoint or event id (the route table check below keeps it so).
    const cases: [string, string, unknown?][] = [
      ["GET", `/v1/endpoints/${ep.id}`],
      ["PATCH", `/v1/endpoints/${ep.id}`, { displayName: "Taken over", status: "paused" }],
      ["DELETE", `/v1/endpoints/${ep.id}`],
      ["GET", `/v1/endpoints/${ep.id}/events`],
      ["GET", `/v1/endpoints/${ep.id}/events?search=mine&wait=0`],
      ["GET", `/v1/endpoints/${ep.id}/events?wait=1`],
      ["GET", `/v1/endpoints/${ep.id}/events/export`],
      ["GET", `/v1/endpoints/${ep.id}/events/export?search=mine`],
      ["GET", `/v1/endpoints/${ep.id}/events/${ev}`],
      ["GET", `/v1/endpoints/${ep.id}/events/${ev}/curl`],
      ["GET", `/v1/endpoints/${ep.id}/events/${ev}/curl?unmasked=true`],
      ["POST", `/v1/endpoints/${ep.id}/events/${ev}/replay`, { target_url: "https://example.test/" }],
      ["POST", `/v1/endpoints/${ep.id}/events/${ev}/redeliver`, {}],
      ["POST", `/v1/endpoints/${ep.id}/events/${ev}/attempts`, { url: "http://127.0.0.1:9/hook", status: 200, durationMs: 5 }],
      ["POST", `/v1/endpoints/${ep.id}/events/${ev}/signature`, {}],
      ["POST", `/v1/endpoints/${ep.id}/events/${ev}/signature`, { target_secret: "whsec_mine" }],
      ["GET", `/v1/endpoints/${ep.id}/events/${ev}/diff?with=${ev}`],
      ["GET", `/v1/endpoints/${ep.id}/listeners`],
      ["PUT", `/v1/endpoints/${ep.id}/listeners/${LISTENER}`, { ...heartbeat, host: "intruder" }],
      ["DELETE", `/v1/endpoints/${ep.id}/listeners/${LISTENER}`],
      ["GET", `/v1/endpoints/${ep.id}/schemas`],
      ["GET", `/v1/endpoints/${ep.id}/schemas/*`],
      ["DELETE", `/v1/endpoints/${ep.id}/events/${ev}`],
      ["POST", `/v1/endpoints/${ep.id}/trigger`, { eventType: "invoice.paid", set: { "data.object.amount_paid": 1 } }],
      ["POST", `/v1/endpoints/${ep.id}/destinations/test`, { destination: { transform: "function transform(req) { return req; }" }, eventId: ev }],
      ["GET", `/v1/endpoints/${ep.id}/redeliveries`],
      ["POST", `/v1/endpoints/${ep.id}/redeliveries`, { filter: {}, dryRun: true }],
      ["POST", `/v1/endpoints/${ep.id}/redeliveries`, { filter: { forwardState: "delivered" } }],
      ["GET", `/v1/endpoints/${ep.id}/redeliveries/${job.id}`],
      ["POST", `/v1/endpoints/${ep.id}/redeliveries/${job.id}/cancel`],
      ["DELETE", `/v1/keys/${aKey.id}`],
      ["POST", `/v1/alert-channels/${channel.id}/test`],
      ["DELETE", `/v1/alert-channels/${channel.id}`],
    ];
    expect(new Set(cases.map(([method, path]) => `${method} ${template(path, ep.id, ev, aKey.id, channel.id, job.id)}`))).toEqual(idRoutes());
    for (const [method, path, json] of cases) {
      const foreign = await t.b.call(method, path, json === undefined ? {} : { json });
      const unknown = await t.b.call(
        method,
        path.replaceAll(ep.id, UUID).replaceAll(ev, UUID).replaceAll(aKey.id, UUID).replaceAll(channel.id, UUID).replaceAll(job.id, UUID),
        json === undefined ? {} : { json },
      );
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
    expect(detail.body.forwardedResponse).toEqual({});
    // The endpoint's one job is still its only one, as it was: b neither saw, started nor canceled any.
    const jobs = (await t.a.get(`/v1/endpoints/${ep.id}/redeliveries`)).body.items as { id: string; state: string }[];
    expect(jobs.map((j) => [j.id, j.state])).toEqual([[job.id, "done"]]);
    const listeners = (await t.a.get(`/v1/endpoints/${ep.id}/listeners`)).body.items as { id: string; host: string }[];
    expect(listeners.map((l) => [l.id, l.host])).toEqual([[LISTENER, "owner-laptop"]]);
    expect((await t.a.get(`/v1/endpoints/${ep.id}/schemas/*`)).body.properties).toEqual({ private_field: { type: "integer" } });
    // The owner's list still pages to it, and the owner's key still works.
    expect((await t.a.get(`/v1/endpoints?limit=500`)).body.items.map((e: { id: string }) => e.id)).toContain(ep.id);
    expect((await t.anonymous.get(`/v1/endpoints/${ep.id}/events`, { key: aKey.key })).status).toBe(200);
    // Keys and the audit log are each account's own: an endpoint id of another account filters to nothing, as an unknown one.
    expect(JSON.stringify((await t.b.get("/v1/keys")).body)).not.toContain(aKey.id);
    // Alert channels too: b never sees a's, and a's is still there, never tested by b.
    expect(JSON.stringify((await t.b.get("/v1/alert-channels")).body)).not.toContain(channel.id);
    const aChannels = (await t.a.get("/v1/alert-channels")).body.items as { id: string; lastDelivery: unknown }[];
    expect(aChannels.find((c) => c.id === channel.id)).toMatchObject({ lastDelivery: null });
    expect((await t.b.get(`/v1/audit?endpointId=${ep.id}`)).body).toEqual((await t.b.get(`/v1/audit?endpointId=${UUID}`)).body);
    expect((await t.b.get(`/v1/audit?endpointId=${ep.id}`)).body.items).toEqual([]);
    expect(JSON.stringify((await t.b.get("/v1/audit")).body)).not.toContain(ep.id);
  });
});

describe("quotas: one tenant's use leaves another served", () => {
  // A system of its own with small quotas: 5 calls a second per key (bursts of 10), 3 endpoints
  // per account, 1 wait long poll per key. Each account's calls here stay within its burst
  // except where a test spends it on purpose (the rate test, last).
  let q: TestSystem;
  beforeAll(async () => {
    q = await startTestSystem({ WHC_QUOTA_API_RPS: "5", WHC_QUOTA_ENDPOINTS: "3", WHC_QUOTA_WAITS_PER_KEY: "1" });
  });
  afterAll(async () => {
    await q.stop();
  });

  it("refuses tenant A's create past its endpoint quota and lets tenant B create", async () => {
    for (let i = 0; i < 3; i += 1) expect((await q.a.post("/v1/endpoints", { slug: `a-${i}` })).status).toBe(201);
    const refused = await q.a.post("/v1/endpoints", { slug: "a-3" });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error: "quota_exceeded", details: { quota: "endpoints", limit: 3 } });
    expect(refused.headers.get("retry-after")).toBeNull();
    expect((await q.b.post("/v1/endpoints", { slug: "b-0" })).status).toBe(201);
  });

  it("refuses tenant A's second concurrent wait and lets tenant B wait", async () => {
    const [aEndpoint] = (await q.a.get("/v1/endpoints")).body.items as { id: string }[];
    const held = new AbortController();
    const poll = fetch(`${q.gatewayUrl}/v1/endpoints/${aEndpoint!.id}/events?wait=30`, {
      headers: { authorization: `Bearer ${KEY_A}` },
      signal: held.signal,
    }).catch(() => undefined);
    try {
      const refused = await waitFor(
        async () => {
          const r = await q.a.get(`/v1/endpoints/${aEndpoint!.id}/events?wait=1`);
          return r.status === 429 ? r : undefined;
        },
        { what: "A's second wait refused" },
      );
      expect(refused.body).toMatchObject({ error: "quota_exceeded", details: { quota: "waits", limit: 1 } });
      expect(refused.headers.get("retry-after")).toBe("1");
      const [bEndpoint] = (await q.b.get("/v1/endpoints")).body.items as { id: string }[];
      const bWait = await q.b.get(`/v1/endpoints/${bEndpoint!.id}/events?wait=1`);
      expect(bWait.status).toBe(200);
    } finally {
      held.abort();
      await poll;
    }
  });

  it("throttles tenant A past its request rate while tenant B's calls, on every kind of route, are answered", async () => {
    const bEndpoint = ((await q.b.get("/v1/endpoints")).body.items as { id: string }[])[0]!;
    const bEvent = (await (await fetch(`${q.ingestUrl}/h/${bEndpoint.id}`, { method: "POST", body: "b's" })).json()) as { id: string };
    const bCalls: [string, string, unknown?][] = [
      ["GET", `/v1/endpoints/${bEndpoint.id}/events/${bEvent.id}`],
      ["GET", `/v1/endpoints/${bEndpoint.id}/events/${bEvent.id}/curl`],
      ["GET", `/v1/endpoints/${bEndpoint.id}/events?limit=5`],
      ["PATCH", `/v1/endpoints/${bEndpoint.id}`, { displayName: "B still here" }],
    ];
    const started = Date.now();
    const [aAnswers, bAnswers] = await Promise.all([
      Promise.all(Array.from({ length: 40 }, () => q.a.get("/v1/endpoints"))),
      Promise.all(bCalls.map(([method, path, json]) => q.b.call(method, path, json === undefined ? {} : { json }))),
    ]);
    const elapsedS = (Date.now() - started) / 1000;
    expect(bAnswers.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const refused = aAnswers.filter((r) => r.status === 429);
    // A token bucket admits at most its burst plus the rate for the time that passed.
    expect(aAnswers.length - refused.length).toBeLessThanOrEqual(10 + Math.ceil(5 * elapsedS));
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      expect(r.body).toMatchObject({ error: "quota_exceeded", details: { quota: "api_rate" } });
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(r.headers.get("ratelimit-limit")).toBe("5");
      expect(r.headers.get("ratelimit-remaining")).toBe("0");
    }
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
      fc.constantFrom("v1", "endpoints", "events", "curl", "replay", "signature", "listeners", "diff", "alert-channels", "test", "schemas", "*", ep.id, UUID, "..", "%00", "%ZZ", "", "x".repeat(300)),
      fc.string({ maxLength: 12 }).map(encodeURIComponent),
    );
    const query = fc.dictionary(
      fc.constantFrom("limit", "before", "beforeId", "after", "afterId", "from", "to", "wait", "search", "status", "responseCode", "x", "unmasked", "with", "ignore", "schemaDrift"),
      fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom("0", "-1", "201", "99999999999", "2026-01-01T00:00:00Z", UUID, "true", "1s", "body.x,headers.date")),
      { maxKeys: 4 },
    );
    const body = fc.oneof(
      fc.constant(undefined),
      fc.string({ maxLength: 200 }),
      fc.json(),
      fc.constantFrom(
        '{"slug":"ok-slug"}',
        '{"__proto__":{"x":1}}',
        '{"constructor":{"prototype":{}}}',
        "[]",
        "null",
        '{"target_url":"x"}',
        '{"host":"h","startedAt":"2026-11-26T10:00:00Z","cursor":{"at":"2026-11-26T10:00:00Z","id":"01a20000-0000-7000-8000-000000000000"}}',
        '{"name":"fuzz","type":"webhook","url":"http://127.0.0.1:9/","events":["test"],"secret":"whsec_x"}',
        '{"name":"fuzz","type":"slack","url":"https://hooks.slack.example.test/x","events":["test","nope"],"endpointIds":["01a20000-0000-7000-8000-000000000000"]}',
      ),
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

describe("tenant bytes are never served as pages (design §14)", () => {
  it("answers what carries captured bytes (the detail the dashboard's raw view loads, the export, the list) and errors with nosniff and a sandbox policy", async () => {
    const ep = (await t.a.post("/v1/endpoints", {})).body as { id: string; webhookUrl: string };
    const html = "<html><script>fetch('/v1/keys')</script></html>";
    const captured = (await (await fetch(ep.webhookUrl, { method: "POST", headers: { "content-type": "text/html" }, body: html })).json()) as { id: string };
    const auth = { authorization: `Bearer ${KEY_A}` };
    const paths = [
      `/v1/endpoints/${ep.id}/events/${captured.id}`,
      `/v1/endpoints/${ep.id}/events/export`,
      `/v1/endpoints/${ep.id}/events`,
      `/v1/endpoints/${ep.id}/events/${UUID}`,
    ];
    for (const path of paths) {
      const res = await fetch(`${t.gatewayUrl}${path}`, { headers: auth });
      const text = await res.text();
      expect([path, res.headers.get("x-content-type-options"), res.headers.get("content-security-policy")]).toEqual([path, "nosniff", "sandbox"]);
      if (path.endsWith(captured.id)) expect(JSON.parse(text).body).toBe(html);
    }
  });
});
