import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { startTestSystem, type TestSystem } from "./testing/index.js";

let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem();
});
afterAll(async () => {
  await t.stop();
});

async function createEndpoint(body: Record<string, unknown> = {}) {
  const res = await t.a.post("/v1/endpoints", body);
  expect(res.status).toBe(201);
  return res.body as { id: string; webhookUrl: string; slug: string };
}

describe("the capture path, all-in-one", () => {
  it("creates, lists, reads and deletes endpoints (ops 1-4)", async () => {
    const ep = await createEndpoint({ slug: "orders", displayName: "Orders" });
    expect(ep).toMatchObject({
      slug: "orders",
      displayName: "Orders",
      operatingMode: "capture",
      status: "active",
      replayFromApi: true,
      replayFromDashboard: true,
      provider: "generic",
      secretSet: false,
      source: "api",
      eventCount: 0,
    });
    expect(ep.webhookUrl).toBe(`${t.ingestUrl}/h/${ep.id}`);
    const list = await t.a.get("/v1/endpoints");
    expect(list.body.items.map((e: { id: string }) => e.id)).toContain(ep.id);
    expect((await t.a.get(`/v1/endpoints/${ep.id}`)).body.id).toBe(ep.id);
    expect((await t.a.delete(`/v1/endpoints/${ep.id}`)).status).toBe(204);
    expect((await t.a.get(`/v1/endpoints/${ep.id}`)).status).toBe(404);
    expect((await t.a.delete(`/v1/endpoints/${ep.id}`)).status).toBe(404);
  });

  it("defaults the slug and display name", async () => {
    const ep = await createEndpoint();
    expect(ep.slug).toMatch(/^[a-z0-9][a-z0-9_-]{0,63}$/);
    expect((ep as unknown as { displayName: string }).displayName).toBe(ep.slug);
  });

  it("captures any call, lists it newest first, reads it decrypted and deletes it (ops 5-7)", async () => {
    const ep = await createEndpoint();
    const first = await fetch(`${ep.webhookUrl}/deep/path?x=1&y=2`, {
      method: "POST",
      headers: { "content-type": "application/json", "X-Dup": "a" },
      body: JSON.stringify({ type: "invoice.paid", n: 1 }),
    });
    expect(first.status).toBe(200);
    const firstBody = (await first.json()) as { ok: boolean; id: string };
    expect(firstBody.ok).toBe(true);
    const second = await fetch(ep.webhookUrl, { method: "PUT", body: "plain text" });
    const secondId = ((await second.json()) as { id: string }).id;

    const list = await t.a.get(`/v1/endpoints/${ep.id}/events?limit=10`);
    expect(list.status).toBe(200);
    expect(list.body.items.map((e: { id: string }) => e.id)).toEqual([secondId, firstBody.id]);
    expect(list.body.items[1]).toMatchObject({
      endpointId: ep.id,
      method: "POST",
      canonicalEventType: "invoice.paid",
      verification: "unverified",
      responseCode: 200,
      truncated: false,
      decryption: "ok",
    });

    const detail = await t.a.get(`/v1/endpoints/${ep.id}/events/${firstBody.id}`);
    expect(detail.status).toBe(200);
    expect(detail.body.body).toBe('{"type":"invoice.paid","n":1}');
    expect(detail.body.bodyEncoding).toBe("utf8");
    expect(detail.body.headers["X-Dup"]).toEqual(["a"]);
    expect(detail.body.remoteIp).toBe("127.0.0.1");
    expect(detail.body.readAt).toBeDefined();

    expect((await t.a.delete(`/v1/endpoints/${ep.id}/events/${firstBody.id}`)).status).toBe(204);
    expect((await t.a.delete(`/v1/endpoints/${ep.id}/events/${firstBody.id}`)).status).toBe(204);
    expect((await t.a.get(`/v1/endpoints/${ep.id}/events/${firstBody.id}`)).status).toBe(404);
    const after = await t.a.get(`/v1/endpoints/${ep.id}`);
    expect(after.body.eventCount).toBe(1);
  });

  it("keeps binary bodies exact and returns them as base64", async () => {
    const ep = await createEndpoint();
    const bytes = Buffer.concat([Buffer.from([0, 255, 254, 13, 10]), randomBytes(300)]);
    const res = await fetch(ep.webhookUrl, { method: "POST", body: bytes });
    const { id } = (await res.json()) as { id: string };
    const detail = await t.a.get(`/v1/endpoints/${ep.id}/events/${id}`);
    expect(detail.body.bodyEncoding).toBe("base64");
    expect(Buffer.from(detail.body.body, "base64").equals(bytes)).toBe(true);
  });

  it("stores bodies encrypted: no body word in the data directory", async () => {
    const ep = await createEndpoint();
    const marker = `zebracorn${randomBytes(6).toString("hex")}`;
    await fetch(ep.webhookUrl, { method: "POST", body: `{"note":"${marker}"}` });
    const found = await t.a.get(`/v1/endpoints/${ep.id}/events?search=${marker}`);
    expect(found.body.items).toHaveLength(1);
    for (const file of readdirSync(t.dataDir)) {
      const content = readFileSync(path.join(t.dataDir, file));
      expect(content.includes(Buffer.from(marker)), file).toBe(false);
    }
  });

  it("answers 404 for an unknown endpoint and stores nothing", async () => {
    const res = await fetch(`${t.ingestUrl}/h/01a20000-0000-7000-8000-000000000000`, { method: "POST", body: "x" });
    expect(res.status).toBe(404);
  });

  it("reports health on both surfaces without credentials", async () => {
    expect((await fetch(`${t.gatewayUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${t.ingestUrl}/healthz`)).status).toBe(200);
  });
});

describe("bad input on the capture path", () => {
  it("401 without a key, with an unknown key and with a wrong scheme", async () => {
    const variants: Record<string, string>[] = [{}, { authorization: `Bearer whc_${"x".repeat(40)}` }, { authorization: "Basic abc" }, { authorization: "Bearer " }];
    for (const headers of variants) {
      const res = await t.anonymous.get("/v1/endpoints", { headers });
      expect(res.status).toBe(401);
      expect(res.body.error).toBe("unauthorized");
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
    }
  });

  it("400 malformed_json for broken JSON and for non-objects", async () => {
    for (const body of ["{", "[1,2]", "42", "null", '"text"']) {
      const res = await t.a.call("POST", "/v1/endpoints", { body, headers: { "content-type": "application/json" } });
      expect(res.status, body).toBe(400);
      expect(res.body.error).toBe("malformed_json");
    }
  });

  it("400 validation_failed naming the field for a bad slug, an unknown field, a long name", async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ slug: "Bad Slug" }, "slug", "pattern"],
      [{ slug: "-lead" }, "slug", "pattern"],
      [{ slug: "a".repeat(65) }, "slug", "pattern"],
      [{ slug: 5 }, "slug", "type"],
      [{ displayName: "" }, "displayName", "length"],
      [{ displayName: "x".repeat(101) }, "displayName", "length"],
      [{ colour: "red" }, "colour", "unknown"],
      [{ operatingMode: "loud" }, "operatingMode", "format"],
    ];
    for (const [body, field, reason] of cases) {
      const res = await t.a.post("/v1/endpoints", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toMatchObject({ error: "validation_failed", details: { field, reason } });
    }
  });

  it("409 slug_taken for a slug the account already has", async () => {
    await createEndpoint({ slug: "twice" });
    const res = await t.a.post("/v1/endpoints", { slug: "twice" });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe("slug_taken");
    expect((await t.b.post("/v1/endpoints", { slug: "twice" })).status).toBe(201);
  });

  it("404 for unknown ids and routes, 400 for non-UUID ids", async () => {
    const unknown = "01a20000-0000-7000-8000-000000000000";
    expect((await t.a.get(`/v1/endpoints/${unknown}`)).body.error).toBe("not_found");
    expect((await t.a.get(`/v1/endpoints/${unknown}/events`)).status).toBe(404);
    expect((await t.a.get("/v1/nowhere")).status).toBe(404);
    const bad = await t.a.get("/v1/endpoints/not-a-uuid");
    expect(bad.status).toBe(400);
    expect(bad.body.details).toEqual({ field: "id", reason: "format" });
  });

  it("never shows one account's endpoint to another: identical 404s", async () => {
    const ep = await createEndpoint();
    const unknown = await t.b.get("/v1/endpoints/01a20000-0000-7000-8000-000000000000");
    const foreign = await t.b.get(`/v1/endpoints/${ep.id}`);
    expect(foreign.status).toBe(404);
    const { requestId: _a, ...foreignRest } = foreign.body;
    const { requestId: _b, ...unknownRest } = unknown.body;
    expect(foreignRest).toEqual(unknownRest);
  });

  it("carries the request id in the header and the body, keeping a well-formed inbound one", async () => {
    const res = await t.a.get("/v1/endpoints/nope", { headers: { "x-request-id": "trace-123.abc" } });
    expect(res.headers.get("x-request-id")).toBe("trace-123.abc");
    expect(res.body.requestId).toBe("trace-123.abc");
    const fresh = await t.a.get("/v1/endpoints/nope", { headers: { "x-request-id": "bad id!" } });
    expect(fresh.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(fresh.body.requestId).toBe(fresh.headers.get("x-request-id"));
  });

  it("415 for a body that is not JSON and 413 for one over the route's limit (1 MiB for endpoints, 64 KiB elsewhere)", async () => {
    const text = await t.a.call("POST", "/v1/endpoints", { body: "slug=x", headers: { "content-type": "text/plain" } });
    expect(text.status).toBe(415);
    expect(text.body.error).toBe("unsupported_media_type");
    const big = await t.a.post("/v1/endpoints", { displayName: "x".repeat(1025 * 1024) });
    expect(big.status).toBe(413);
    expect(big.body.error).toBe("payload_too_large");
    const bigKey = await t.a.post("/v1/keys", { name: "x".repeat(70 * 1024), scopes: ["events:read"] });
    expect([bigKey.status, bigKey.body.error]).toEqual([413, "payload_too_large"]);
  });

  it("405 with Allow for a known path and a wrong method", async () => {
    const res = await t.a.call("PATCH", "/v1/endpoints");
    expect(res.status).toBe(405);
    expect(res.body.error).toBe("method_not_allowed");
    expect(res.headers.get("allow")).toContain("POST");
  });
});
