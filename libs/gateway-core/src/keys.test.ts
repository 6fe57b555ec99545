import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { apiKeyView, createdApiKey } from "@whc/api-model";
import { generateApiKey, hashApiKey, keyPrefix } from "@whc/identity";
import { recordingFetch, refusal, startTestGateway, type TestGateway } from "./testing/index.js";

/** Keys over /v1 (design §15): created with scopes, endpoints and expiry, listed, used, revoked. */
let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
});
afterAll(async () => {
  await t.close();
});

const UNKNOWN_ID = "01a20000-0000-7000-8000-000000000000";

describe("keys over /v1", () => {
  it("creates a scoped key shown once, lists it without the key, and it does what its scopes allow, 403 beyond", async () => {
    const rec = recordingFetch();
    const created = await t.client(t.a.key, { fetch: rec.fetch }).keys.create({ name: "ci-reader", scopes: ["endpoints:read", "events:read", "events:read"] });
    expect(rec.last().status).toBe(201);
    expect(createdApiKey.strict().parse(created)).toEqual(created);
    expect(created).toMatchObject({ name: "ci-reader", scopes: ["endpoints:read", "events:read"], endpointIds: [], expiresAt: null, lastUsedAt: null, revokedAt: null });
    expect(created.key).toMatch(/^whc_[A-Za-z0-9]{40}$/);
    expect(created.key.startsWith(created.prefix)).toBe(true);

    const listed = (await t.a.api.keys.list()).items.find((k) => k.id === created.id)!;
    expect(apiKeyView.strict().parse(listed)).toEqual(listed);
    expect(JSON.stringify(await t.a.api.keys.list())).not.toContain(created.key);

    const reader = t.client(created.key);
    const ep = await t.a.api.endpoints.create({ slug: "read-me" });
    expect((await reader.endpoints.get(ep.id)).id).toBe(ep.id);
    expect((await reader.events.list(ep.id)).items).toEqual([]);
    const refused = await refusal(reader.endpoints.update(ep.id, { displayName: "mine now" }));
    expect(refused).toMatchObject({ status: 403, code: "forbidden", details: { scope: "endpoints:write" } });
    expect((await refusal(reader.keys.list())).details).toEqual({ scope: "keys:write" });
    expect((await t.a.api.endpoints.get(ep.id)).displayName).toBe("read-me");
  });

  it("records lastUsedAt on use, at most once a minute", async () => {
    const { key, id } = await t.a.api.keys.create({ name: "used", scopes: ["endpoints:read"] });
    const lastUsed = async () => (await t.a.api.keys.list()).items.find((k) => k.id === id)!.lastUsedAt;
    expect(await lastUsed()).toBeNull();
    await t.client(key).endpoints.list();
    const first = await lastUsed();
    expect(Date.parse(first!)).toBeGreaterThan(Date.now() - 60_000);
    await t.client(key).endpoints.list();
    expect(await lastUsed()).toBe(first);
  });

  it("refuses an expired or revoked key with 401, exactly as an unknown one", async () => {
    const unknown = await refusal(t.client(generateApiKey()).endpoints.list());
    const expired = generateApiKey();
    await t.catalog.createApiKey({
      accountId: t.a.accountId,
      name: "expired",
      keyHash: hashApiKey(expired),
      prefix: keyPrefix(expired),
      scopes: ["*"],
      expiresAtMs: BigInt(Date.now() - 1),
    });
    const { key, id } = await t.a.api.keys.create({ name: "revoke-me", scopes: ["*"], expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    expect((await t.client(key).endpoints.list()).items.length).toBeGreaterThan(0);
    await t.a.api.keys.revoke(id);
    await t.a.api.keys.revoke(id);
    const revokedAt = (await t.a.api.keys.list()).items.find((k) => k.id === id)!.revokedAt;
    expect(revokedAt).not.toBeNull();
    for (const refused of [await refusal(t.client(expired).endpoints.list()), await refusal(t.client(key).endpoints.list())]) {
      expect(refused.status).toBe(401);
      expect([refused.code, refused.message, refused.details]).toEqual([unknown.code, unknown.message, unknown.details]);
      expect(refused.headers?.get("www-authenticate")).toBe(unknown.headers?.get("www-authenticate"));
    }
    // Another account's key and an unknown id are the same 404.
    const foreign = await t.b.api.keys.create({ name: "b's", scopes: ["events:read"] });
    const a404 = await refusal(t.a.api.keys.revoke(foreign.id));
    const u404 = await refusal(t.a.api.keys.revoke(UNKNOWN_ID));
    expect([a404.status, a404.code, a404.details]).toEqual([u404.status, u404.code, u404.details]);
    expect(a404.status).toBe(404);
    expect((await t.client(foreign.key).keys.list().catch((e: unknown) => e)) as object).toMatchObject({ status: 403 });
  });

  it("validates what a key is made of", async () => {
    const cases: [unknown, string, string][] = [
      [{ name: "x", scopes: ["events:delete"] }, "scopes.0", "format"],
      [{ name: "x", scopes: [] }, "scopes", "length"],
      [{ scopes: ["*"] }, "name", "required"],
      [{ name: "x", scopes: ["*"], expiresAt: new Date(Date.now() - 1000).toISOString() }, "expiresAt", "range"],
      [{ name: "x", scopes: ["*"], endpointIds: [UNKNOWN_ID] }, "endpointIds.0", "unknown"],
      [{ name: "x", scopes: ["*"], owner: "me" }, "owner", "unknown"],
    ];
    for (const [body, field, reason] of cases) {
      const err = await refusal(t.a.api.request("POST", "/v1/keys", { body }));
      expect([err.status, err.code, err.details], JSON.stringify(body)).toEqual([400, "validation_failed", { field, reason }]);
    }
    // Another account's endpoint is as unknown as a made-up id.
    const bEndpoint = await t.b.api.endpoints.create({});
    const err = await refusal(t.a.api.keys.create({ name: "x", scopes: ["*"], endpointIds: [bEndpoint.id] }));
    expect(err.details).toEqual({ field: "endpointIds.0", reason: "unknown" });
  });
});
