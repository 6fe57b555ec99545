import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { startTestSystem, type TestSystem } from "./testing/index.js";

/**
 * Keys and the audit log through the all-in-one wiring (design §15): the embedded store on its
 * own thread, ingest capturing a triggered sample, the gateway checking scopes and writing
 * entries; every answer checked against the OpenAPI document.
 */
let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem();
});
afterAll(async () => {
  await t?.stop();
});

describe("keys and the audit log, all in one process", () => {
  it("lets a scoped, restricted key trigger and read on its endpoint only, and records what it did", async () => {
    const secret = "whsec_keys_audit_all_in_one";
    const mine = (await t.a.post("/v1/endpoints", { slug: "ci-target", provider: "stripe", secret })).body as { id: string };
    const other = (await t.a.post("/v1/endpoints", { slug: "not-ci" })).body as { id: string };
    const created = await t.a.post("/v1/keys", { name: "ci", scopes: ["endpoints:read", "events:read", "events:replay"], endpointIds: [mine.id] });
    expect(created.status).toBe(201);
    const ci = created.body as { id: string; key: string; prefix: string };

    const triggered = await t.a.post(`/v1/endpoints/${mine.id}/trigger`, { eventType: "invoice.paid" }, { key: ci.key });
    expect(triggered.status).toBe(200);
    const eventId = triggered.body.eventId as string;
    const read = await t.a.get(`/v1/endpoints/${mine.id}/events/${eventId}`, { key: ci.key });
    expect([read.status, read.body.verification]).toEqual([200, "verified"]);

    const deleting = await t.a.delete(`/v1/endpoints/${mine.id}`, { key: ci.key });
    expect([deleting.status, deleting.body.details]).toEqual([403, { scope: "endpoints:write" }]);
    expect((await t.a.get(`/v1/endpoints/${other.id}/events`, { key: ci.key })).status).toBe(404);
    expect((await t.a.get("/v1/endpoints", { key: ci.key })).body.items.map((e: { id: string }) => e.id)).toEqual([mine.id]);

    const log = (await t.a.get("/v1/audit?limit=200")).body.items as { action: string; keyId: string; eventId: string | null; details: Record<string, unknown> }[];
    const byCi = log.filter((e) => e.keyId === ci.id).map((e) => [e.action, e.eventId, e.details]);
    expect(byCi).toEqual([
      ["event.read", eventId, {}],
      ["event.triggered", eventId, { eventType: "invoice.paid" }],
    ]);
    expect(log.find((e) => e.action === "key.created")?.details).toMatchObject({ id: ci.id, scopes: ["endpoints:read", "events:read", "events:replay"], endpointIds: [mine.id] });
    expect((await t.a.get(`/v1/audit?keyId=${ci.id}&action=event.read`)).body.items).toHaveLength(1);
    const text = JSON.stringify(log);
    for (const hidden of [secret, ci.key, read.body.body as string]) expect(text).not.toContain(hidden);

    // The key lists with its last use, and once revoked it is refused like an unknown key.
    const listed = ((await t.a.get("/v1/keys")).body.items as { id: string; lastUsedAt: string | null }[]).find((k) => k.id === ci.id)!;
    expect(listed.lastUsedAt).not.toBeNull();
    expect((await t.a.delete(`/v1/keys/${ci.id}`)).status).toBe(204);
    expect((await t.a.get(`/v1/endpoints/${mine.id}`, { key: ci.key })).status).toBe(401);
  });
});
