import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { endpoint as endpointSchema, errorReply, providerList, type ApiError } from "@whc/api-model";
import { errorTable } from "./errors-table.js";
import { recordingFetch, refusal, startTestGateway, type TestGateway } from "./testing/index.js";

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
});
afterAll(async () => {
  await t.close();
});

const UNKNOWN_ID = "01a20000-0000-7000-8000-000000000000";

/** The error reply of docs/design.md §3: the code's status and fixed message, details, requestId = X-Request-Id. */
function expectReply(err: ApiError, status: number, code: keyof typeof errorTable) {
  expect(err.status).toBe(status);
  expect(err.code).toBe(code);
  expect(err.message).toBe(errorTable[code].message);
  expect(typeof err.details).toBe("object");
  expect(err.requestId).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
  expect(err.headers?.get("x-request-id")).toBe(err.requestId);
}

/** A raw answer that must be an error reply: every field present, nothing else. */
async function expectRawReply(res: Response, status: number, code: keyof typeof errorTable) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  const body = (await res.json()) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(["details", "error", "message", "requestId"]);
  expect(errorReply.parse(body)).toEqual(body);
  expect(body.error).toBe(code);
  expect(body.message).toBe(errorTable[code].message);
  expect(body.requestId).toBe(res.headers.get("x-request-id"));
  return body as { details: Record<string, unknown> };
}

function post(path: string, body: string | Buffer, headers: Record<string, string> = { "content-type": "application/json" }) {
  return fetch(`${t.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${t.a.key}`, ...headers }, body });
}

describe("creating an endpoint", () => {
  it("answers 201 with Location and the defaults", async () => {
    const rec = recordingFetch();
    const api = t.client(t.a.key, { fetch: rec.fetch });
    const ep = await api.endpoints.create({ slug: "orders" });
    expect(rec.last().status).toBe(201);
    expect(rec.last().headers.get("location")).toBe(`/v1/endpoints/${ep.id}`);
    expect(endpointSchema.strict().parse(ep)).toEqual(ep);
    expect(ep).toMatchObject({
      slug: "orders",
      displayName: "orders",
      webhookUrl: `${t.options.ingestPublicUrl}/h/${ep.id}`,
      operatingMode: "capture",
      status: "active",
      replayFromDashboard: true,
      replayFromApi: true,
      provider: "generic",
      secretSet: false,
      source: "api",
      eventCount: 0,
      purgedEventCount: 0,
    });
  });

  it("makes up a slug when none is given, and takes an empty body as no field", async () => {
    const ep = await t.a.api.endpoints.create({});
    expect(ep.slug).toMatch(/^[a-z0-9][a-z0-9_-]{0,63}$/);
    expect(ep.displayName).toBe(ep.slug);
    const res = await fetch(`${t.url}/v1/endpoints`, { method: "POST", headers: { authorization: `Bearer ${t.a.key}` } });
    expect(res.status).toBe(201);
  });

  it("takes a provider and a write-only secret, which the catalog holds sealed", async () => {
    const ep = await t.a.api.endpoints.create({ slug: "stripe-in", provider: "stripe", secret: "whsec_c2VjcmV0" });
    expect(ep).toMatchObject({ provider: "stripe", secretSet: true });
    expect(JSON.stringify(ep)).not.toContain("whsec_");
    const held = await t.catalog.getEndpoint({ accountId: t.a.accountId, endpointId: ep.id, includeSealedSecret: true });
    expect(Buffer.from(held.endpoint!.sealedSecret).toString("utf8")).not.toContain("whsec_");
    const opened = await t.crypto.openSecret({ sealed: held.endpoint!.sealedSecret });
    expect(Buffer.from(opened.plaintext).toString("utf8")).toBe("whsec_c2VjcmV0");
  });

  it("refuses a slug the account already has with 409 slug_taken, while another account may use it", async () => {
    await t.a.api.endpoints.create({ slug: "dup" });
    expectReply(await refusal(t.a.api.endpoints.create({ slug: "dup" })), 409, "slug_taken");
    expect((await t.b.api.endpoints.create({ slug: "dup" })).slug).toBe("dup");
  });

  it("names the field and the reason of a validation failure", async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ slug: "Not A Slug" }, "slug", "pattern"],
      [{ slug: "x".repeat(65) }, "slug", "pattern"],
      [{ displayName: "" }, "displayName", "length"],
      [{ replayFromApi: "yes" }, "replayFromApi", "type"],
      [{ colour: "red" }, "colour", "unknown"],
      [{ secret: "s", webhookUrl: "x" }, "webhookUrl", "unknown"],
    ];
    for (const [body, field, reason] of cases) {
      const err = await refusal(t.a.api.endpoints.create(body as never));
      expectReply(err, 400, "validation_failed");
      expect(err.details, JSON.stringify(body)).toEqual({ field, reason });
    }
  });

  it("keeps redact settings (design §16): shown as given, replaced by a PATCH, removed by null; bad ones named", async () => {
    const redact = { headers: ["authorization"], jsonPaths: ["$.card.number"], patterns: ["\\b\\d{13,19}\\b"] };
    const ep = await t.a.api.endpoints.create({ redact });
    expect(ep.redact).toEqual(redact);
    expect((await t.a.api.endpoints.get(ep.id)).redact).toEqual(redact);
    expect((await t.a.api.endpoints.update(ep.id, { redact: { jsonPaths: ["$.items[*].pan"] } })).redact).toEqual({ jsonPaths: ["$.items[*].pan"] });
    expect((await t.a.api.endpoints.update(ep.id, { displayName: "kept" })).redact).toEqual({ jsonPaths: ["$.items[*].pan"] });
    expect((await t.a.api.endpoints.update(ep.id, { redact: null })).redact).toBeUndefined();
    // Settings that redact nothing are none.
    expect((await t.a.api.endpoints.create({ redact: { headers: [] } })).redact).toBeUndefined();
    const cases: [Record<string, unknown>, string, string][] = [
      [{ headers: ["bad header"] }, "redact.headers.0", "pattern"],
      [{ jsonPaths: ["card.number"] }, "redact.jsonPaths.0", "format"],
      [{ patterns: ["(unclosed"] }, "redact.patterns.0", "format"],
      [{ patterns: ["(a+)+$"] }, "redact.patterns.0", "format"],
      [{ patterns: Array.from({ length: 11 }, (_, i) => `p${i}`) }, "redact.patterns", "length"],
      [{ cards: true }, "redact.cards", "unknown"],
    ];
    for (const [bad, field, reason] of cases) {
      for (const call of [t.a.api.endpoints.create({ redact: bad } as never), t.a.api.endpoints.update(ep.id, { redact: bad } as never)]) {
        const err = await refusal(call);
        expectReply(err, 400, "validation_failed");
        expect(err.details, JSON.stringify(bad)).toEqual({ field, reason });
      }
    }
  });

  it("keeps dedupe settings (design §17): shown as given, replaced by a PATCH, removed by null; bad ones named", async () => {
    const auto = { windowSeconds: 3600, key: "auto" as const };
    const ep = await t.a.api.endpoints.create({ dedupe: auto });
    expect(ep.dedupe).toEqual(auto);
    expect(endpointSchema.strict().parse(ep)).toEqual(ep);
    expect((await t.a.api.endpoints.get(ep.id)).dedupe).toEqual(auto);
    const fields = { windowSeconds: 600, fields: ["header.x-request-id", "body.id"] };
    expect((await t.a.api.endpoints.update(ep.id, { dedupe: fields })).dedupe).toEqual(fields);
    expect((await t.a.api.endpoints.update(ep.id, { displayName: "kept" })).dedupe).toEqual(fields);
    expect((await t.a.api.endpoints.update(ep.id, { dedupe: null })).dedupe).toBeUndefined();
    expect((await t.a.api.endpoints.create({})).dedupe).toBeUndefined();
    const cases: [Record<string, unknown>, string, string][] = [
      [{ key: "auto" }, "dedupe.windowSeconds", "required"],
      [{ windowSeconds: 0, key: "auto" }, "dedupe.windowSeconds", "range"],
      [{ windowSeconds: 30 * 86_400 + 1, key: "auto" }, "dedupe.windowSeconds", "range"],
      [{ windowSeconds: 60 }, "dedupe.key", "required"],
      [{ windowSeconds: 60, key: "auto", fields: ["body.id"] }, "dedupe.key", "unsupported"],
      [{ windowSeconds: 60, key: "event_id" }, "dedupe.key", "format"],
      [{ windowSeconds: 60, fields: [] }, "dedupe.fields", "length"],
      [{ windowSeconds: 60, fields: ["body.a", "body.b", "body.c", "body.d", "body.e", "body.f"] }, "dedupe.fields", "length"],
      [{ windowSeconds: 60, fields: ["body.id", "body.id"] }, "dedupe.fields", "duplicate"],
      [{ windowSeconds: 60, fields: ["id"] }, "dedupe.fields.0", "pattern"],
      [{ windowSeconds: 60, fields: ["header.bad header"] }, "dedupe.fields.0", "pattern"],
      [{ windowSeconds: 60, fields: ["body.a.b.c.d.e.f.g.h.i"] }, "dedupe.fields.0", "pattern"],
      [{ windowSeconds: 60, fields: [`body.${"a".repeat(201)}`] }, "dedupe.fields.0", "length"],
      [{ windowSeconds: 60, key: "auto", scope: "account" }, "dedupe.scope", "unknown"],
    ];
    for (const [bad, field, reason] of cases) {
      for (const call of [t.a.api.endpoints.create({ dedupe: bad } as never), t.a.api.endpoints.update(ep.id, { dedupe: bad } as never)]) {
        const err = await refusal(call);
        expectReply(err, 400, "validation_failed");
        expect(err.details, JSON.stringify(bad)).toEqual({ field, reason });
      }
    }
  });

  it("refuses dedupe on a proxy endpoint (reason unsupported), and a switch to proxy that keeps it", async () => {
    const forward = { url: "https://app.example.test/hooks" };
    const dedupe = { windowSeconds: 60, key: "auto" as const };
    const unsupported = (field: string) => ({ field, reason: "unsupported" });
    expect((await refusal(t.a.api.endpoints.create({ operatingMode: "proxy", forward, dedupe }))).details).toEqual(unsupported("dedupe"));
    const proxy = await t.a.api.endpoints.create({ operatingMode: "proxy", forward });
    expect((await refusal(t.a.api.endpoints.update(proxy.id, { dedupe }))).details).toEqual(unsupported("dedupe"));
    expect((await t.a.api.endpoints.update(proxy.id, { dedupe: null })).dedupe).toBeUndefined();
    const relay = await t.a.api.endpoints.create({ operatingMode: "relay", forward, dedupe });
    expect((await refusal(t.a.api.endpoints.update(relay.id, { operatingMode: "proxy" }))).details).toEqual(unsupported("operatingMode"));
    expect((await refusal(t.a.api.endpoints.update(relay.id, { operatingMode: "proxy", dedupe }))).details).toEqual(unsupported("dedupe"));
    expect((await t.a.api.endpoints.get(relay.id)).operatingMode).toBe("relay");
    const switched = await t.a.api.endpoints.update(relay.id, { operatingMode: "proxy", dedupe: null });
    expect([switched.operatingMode, switched.dedupe]).toEqual(["proxy", undefined]);
    // Back to relay, dedupe may come back.
    expect((await t.a.api.endpoints.update(relay.id, { operatingMode: "relay", dedupe })).dedupe).toEqual(dedupe);
  });

  it("refuses a provider the registry does not know, naming the field", async () => {
    const err = await refusal(t.a.api.endpoints.create({ provider: "paypal_classic" }));
    expectReply(err, 400, "validation_failed");
    expect(err.details.field).toBe("provider");
    const list = await t.a.api.endpoints.list();
    expect(list.items.some((e) => e.provider === "paypal_classic")).toBe(false);
  });

  it("refuses a body that is not application/json with 415", async () => {
    await expectRawReply(await post("/v1/endpoints", '{"slug":"plain"}', { "content-type": "text/plain" }), 415, "unsupported_media_type");
    await expectRawReply(
      await post("/v1/endpoints", "slug=form", { "content-type": "application/x-www-form-urlencoded" }),
      415,
      "unsupported_media_type",
    );
  });

  it("refuses a body that is not a JSON object with 400 malformed_json", async () => {
    for (const body of ['{"slug":', "not json", "[]", "null", "42", '"text"']) {
      await expectRawReply(await post("/v1/endpoints", body), 400, "malformed_json");
    }
  });

  it("refuses a body over its route's limit with 413 and stores nothing: 1 MiB for endpoints (destinations travel there), 64 KiB elsewhere", async () => {
    const before = (await t.a.api.endpoints.list()).items.length;
    const body = JSON.stringify({ slug: "big", displayName: "x", genericSignaturePrefix: "p".repeat(1024 * 1024) });
    expect(Buffer.byteLength(body)).toBeGreaterThan(1024 * 1024);
    await expectRawReply(await post("/v1/endpoints", body), 413, "payload_too_large");
    // Without a Content-Length, the count is of the bytes as they come.
    const chunks = [Buffer.from(body.slice(0, 300_000)), Buffer.from(body.slice(300_000))];
    const stream = new ReadableStream({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk);
        controller.close();
      },
    });
    const chunked = await fetch(`${t.url}/v1/endpoints`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.a.key}`, "content-type": "application/json" },
      body: stream,
      duplex: "half",
    } as RequestInit);
    await expectRawReply(chunked, 413, "payload_too_large");
    expect((await t.a.api.endpoints.list()).items.length).toBe(before);
    // Just under the limit is read (and then judged by the schema, not refused for its size).
    const under = JSON.stringify({ slug: "under", genericSignaturePrefix: "p".repeat(1000 * 1024) });
    const res = await post("/v1/endpoints", under);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { details: unknown }).details).toEqual({ field: "genericSignaturePrefix", reason: "length" });
    // Other routes keep 64 KiB.
    const key = JSON.stringify({ name: "k".repeat(65 * 1024), scopes: ["events:read"] });
    await expectRawReply(await post("/v1/keys", key), 413, "payload_too_large");
  });
});

describe("reading and deleting endpoints", () => {
  it("lists, gets and deletes (204, then 404 for get and delete)", async () => {
    const owner = await t.account();
    const rec = recordingFetch();
    const api = t.client(owner.key, { fetch: rec.fetch });
    const one = await api.endpoints.create({ slug: "one" });
    const two = await api.endpoints.create({ slug: "two", displayName: "Two" });
    const listed = await api.endpoints.list();
    expect(rec.last().status).toBe(200);
    expect(listed.items.map((e) => e.id).sort()).toEqual([one.id, two.id].sort());
    expect(listed.items.find((e) => e.id === two.id)).toEqual(two);
    expect(await api.endpoints.get(two.id)).toEqual(two);

    expect(await api.endpoints.delete(two.id)).toBeUndefined();
    expect(rec.last().status).toBe(204);
    expect(rec.last().headers.get("content-length") ?? "0").toBe("0");
    expectReply(await refusal(api.endpoints.get(two.id)), 404, "not_found");
    expectReply(await refusal(api.endpoints.delete(two.id)), 404, "not_found");
    expect((await api.endpoints.list()).items.map((e) => e.id)).toEqual([one.id]);
  });

  it("answers another account's endpoint exactly as an unknown id, and leaves it alone", async () => {
    const mine = await t.a.api.endpoints.create({ slug: "mine" });
    const upper = mine.id.toUpperCase();
    for (const call of [
      () => t.b.api.endpoints.get(mine.id),
      () => t.b.api.endpoints.delete(mine.id),
      () => t.b.api.events.list(mine.id),
    ]) {
      const foreign = await refusal(call());
      expectReply(foreign, 404, "not_found");
      expect(foreign.details).toEqual({});
    }
    const unknown = await refusal(t.b.api.endpoints.get(UNKNOWN_ID));
    const foreign = await refusal(t.b.api.endpoints.get(upper));
    expect([foreign.status, foreign.code, foreign.message, foreign.details]).toEqual([
      unknown.status,
      unknown.code,
      unknown.message,
      unknown.details,
    ]);
    expect(await t.a.api.endpoints.get(mine.id)).toEqual(mine);
  });

  it("refuses a path id that is not a UUID as validation_failed naming the parameter", async () => {
    for (const id of ["not-a-uuid", "123", `${UNKNOWN_ID}0`]) {
      const err = await refusal(t.a.api.endpoints.get(id));
      expectReply(err, 400, "validation_failed");
      expect(err.details).toEqual({ field: "id", reason: "format" });
    }
    const err = await refusal(t.a.api.events.get(UNKNOWN_ID, "nope"));
    expect(err.details).toEqual({ field: "eventId", reason: "format" });
  });
});


describe("authentication", () => {
  it("answers 401 with WWW-Authenticate: Bearer for a missing, malformed or unknown key", async () => {
    const variants: (Record<string, string> | undefined)[] = [
      undefined,
      { authorization: "Basic dXNlcjpwYXNz" },
      { authorization: "Bearer" },
      { authorization: "Bearer whc_short" },
      { authorization: `Bearer whc_${"Z".repeat(40)}` },
      { authorization: `Bearer ${t.a.key} extra` },
    ];
    for (const headers of variants) {
      const res = await fetch(`${t.url}/v1/endpoints`, headers ? { headers } : {});
      const body = await expectRawReply(res, 401, "unauthorized");
      expect(body.details).toEqual({});
      expect(res.headers.get("www-authenticate"), JSON.stringify(headers)).toMatch(/^Bearer\b/);
    }
    const err = await refusal(t.client(`whc_${"Q".repeat(40)}`).endpoints.list());
    expectReply(err, 401, "unauthorized");
    expect(err.headers?.get("www-authenticate")).toMatch(/^Bearer\b/);
  });

  it("asks no key for the health check and the OpenAPI document, and one for every /v1 operation", async () => {
    expect((await fetch(`${t.url}/v1/openapi.json`)).status).toBe(200);
    expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${t.url}/v1/providers`)).status).toBe(401);
    expect((await fetch(`${t.url}/v1/endpoints/${UNKNOWN_ID}/events`)).status).toBe(401);
  });

  it("asks a key however the path's letters are cased (the router matches them case-insensitively)", async () => {
    for (const path of ["/V1/endpoints", "/V1/providers", `/V1/Endpoints/${UNKNOWN_ID}/events`]) {
      const res = await fetch(`${t.url}${path}`);
      expect([401, 404], `${path} answered ${res.status}`).toContain(res.status);
      await expectRawReply(res, res.status, res.status === 401 ? "unauthorized" : "not_found");
    }
  });
});

describe("routing", () => {
  it("answers a known path with a wrong method 405 with Allow", async () => {
    const cases: [string, string, string[]][] = [
      ["PUT", "/v1/endpoints", ["GET", "POST"]],
      ["POST", `/v1/endpoints/${UNKNOWN_ID}`, ["GET", "DELETE"]],
      ["DELETE", `/v1/endpoints/${UNKNOWN_ID}/events`, ["GET"]],
      ["GET", `/v1/endpoints/${UNKNOWN_ID}/events/${UNKNOWN_ID}/replay`, ["POST"]],
    ];
    for (const [method, path, allowed] of cases) {
      const res = await fetch(`${t.url}${path}`, { method, headers: { authorization: `Bearer ${t.a.key}` } });
      await expectRawReply(res, 405, "method_not_allowed");
      const allow = (res.headers.get("allow") ?? "").split(/,\s*/);
      for (const m of allowed) expect(allow, `${method} ${path}`).toContain(m);
      expect(allow).not.toContain(method);
    }
  });

  it("answers an unknown path 404 not_found", async () => {
    const res = await fetch(`${t.url}/v1/nothing-here`, { headers: { authorization: `Bearer ${t.a.key}` } });
    await expectRawReply(res, 404, "not_found");
  });
});

describe("request ids", () => {
  it("keeps a well-formed inbound X-Request-Id, on successes and in error replies", async () => {
    const ok = await fetch(`${t.url}/v1/endpoints`, { headers: { authorization: `Bearer ${t.a.key}`, "x-request-id": "trace.42_A-b" } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-request-id")).toBe("trace.42_A-b");
    const bad = await fetch(`${t.url}/v1/endpoints/nope`, { headers: { authorization: `Bearer ${t.a.key}`, "x-request-id": "mine-1" } });
    await expectRawReply(bad, 400, "validation_failed");
    expect(bad.headers.get("x-request-id")).toBe("mine-1");
    const err = await refusal(t.client(t.a.key, { headers: { "X-Request-Id": "from-client" } }).endpoints.get(UNKNOWN_ID));
    expect(err.requestId).toBe("from-client");
  });

  it("replaces an inbound id that is not 1-128 of [A-Za-z0-9._-] with a new UUID", async () => {
    for (const inbound of ["has space", "x".repeat(129), "semi;colon"]) {
      const res = await fetch(`${t.url}/v1/endpoints`, { headers: { "x-request-id": inbound } });
      await expectRawReply(res, 401, "unauthorized");
      expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    }
    const [one, two] = [await fetch(`${t.url}/v1/endpoints`), await fetch(`${t.url}/v1/endpoints`)];
    expect(one.headers.get("x-request-id")).not.toBe(two.headers.get("x-request-id"));
  });
});

describe("providers", () => {
  it("lists at least the six providers of the interface, each with a label", async () => {
    const list = await t.a.api.providers.list();
    expect(providerList.strict().parse(list)).toEqual(list);
    const names = list.items.map((p) => p.name);
    expect(names).toEqual(expect.arrayContaining(["generic", "stripe", "github", "slack", "shopify", "standard_webhooks"]));
    expect(new Set(names).size).toBe(names.length);
    for (const p of list.items) expect(p.label.trim(), p.name).not.toBe("");
    // Every listed provider is one an endpoint can be created with.
    const ep = await t.a.api.endpoints.create({ provider: names[names.length - 1]! });
    expect(ep.provider).toBe(names[names.length - 1]);
  });
});
