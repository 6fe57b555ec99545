import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { SCOPES, scopeAllows, type Scope } from "@whc/api-model";
import { startTestGateway, type TestGateway } from "./testing/index.js";

/**
 * The scope matrix (design §15): every /v1 operation of the route table (as the OpenAPI
 * document, generated from it, names it with its `x-scope`) against a key of every scope; then
 * a key restricted to one endpoint against the identical-404 rule; then keys minting keys.
 */
type Json = Record<string, any>;
const METHODS = ["get", "put", "post", "delete", "patch"];
const U = "01a20000-0000-7000-8000-000000000000";
const LISTENER = "01a20000-0000-7000-8000-00000000beef";
const HEARTBEAT = { host: "laptop", startedAt: "2026-11-26T10:00:00.000Z" };

/** One request per operation; ids unknown, so an admitted call changes nothing (404, or a list). */
const REQUESTS: Record<string, { path: string; body?: unknown }> = {
  "GET /v1/endpoints": { path: "/v1/endpoints" },
  "POST /v1/endpoints": { path: "/v1/endpoints", body: {} },
  "GET /v1/endpoints/{id}": { path: `/v1/endpoints/${U}` },
  "PATCH /v1/endpoints/{id}": { path: `/v1/endpoints/${U}`, body: { displayName: "x" } },
  "DELETE /v1/endpoints/{id}": { path: `/v1/endpoints/${U}` },
  "GET /v1/endpoints/{endpointId}/events": { path: `/v1/endpoints/${U}/events` },
  "GET /v1/endpoints/{endpointId}/events/export": { path: `/v1/endpoints/${U}/events/export` },
  "GET /v1/endpoints/{endpointId}/events/{eventId}": { path: `/v1/endpoints/${U}/events/${U}` },
  "DELETE /v1/endpoints/{endpointId}/events/{eventId}": { path: `/v1/endpoints/${U}/events/${U}` },
  "GET /v1/endpoints/{endpointId}/events/{eventId}/curl": { path: `/v1/endpoints/${U}/events/${U}/curl` },
  "GET /v1/endpoints/{endpointId}/events/{eventId}/diff": { path: `/v1/endpoints/${U}/events/${U}/diff?with=${U}` },
  "POST /v1/endpoints/{endpointId}/events/{eventId}/replay": { path: `/v1/endpoints/${U}/events/${U}/replay`, body: { target_url: "http://127.0.0.1:9/" } },
  "POST /v1/endpoints/{endpointId}/events/{eventId}/redeliver": { path: `/v1/endpoints/${U}/events/${U}/redeliver`, body: {} },
  "POST /v1/endpoints/{endpointId}/events/{eventId}/attempts": {
    path: `/v1/endpoints/${U}/events/${U}/attempts`,
    body: { url: "http://127.0.0.1:9/hook", status: 200, durationMs: 5 },
  },
  "POST /v1/endpoints/{endpointId}/events/{eventId}/signature": { path: `/v1/endpoints/${U}/events/${U}/signature`, body: {} },
  "POST /v1/endpoints/{endpointId}/trigger": { path: `/v1/endpoints/${U}/trigger`, body: { eventType: "invoice.paid" } },
  "POST /v1/endpoints/{endpointId}/destinations/test": { path: `/v1/endpoints/${U}/destinations/test`, body: { destination: {}, eventId: U } },
  "POST /v1/endpoints/{endpointId}/redeliveries": { path: `/v1/endpoints/${U}/redeliveries`, body: { filter: {}, dryRun: true } },
  "GET /v1/endpoints/{endpointId}/redeliveries": { path: `/v1/endpoints/${U}/redeliveries` },
  "GET /v1/endpoints/{endpointId}/redeliveries/{jobId}": { path: `/v1/endpoints/${U}/redeliveries/${U}` },
  "POST /v1/endpoints/{endpointId}/redeliveries/{jobId}/cancel": { path: `/v1/endpoints/${U}/redeliveries/${U}/cancel` },
  "GET /v1/endpoints/{endpointId}/listeners": { path: `/v1/endpoints/${U}/listeners` },
  "PUT /v1/endpoints/{endpointId}/listeners/{listenerId}": { path: `/v1/endpoints/${U}/listeners/${LISTENER}`, body: HEARTBEAT },
  "DELETE /v1/endpoints/{endpointId}/listeners/{listenerId}": { path: `/v1/endpoints/${U}/listeners/${LISTENER}` },
  "GET /v1/endpoints/{endpointId}/schemas": { path: `/v1/endpoints/${U}/schemas` },
  "GET /v1/endpoints/{endpointId}/schemas/{eventType}": { path: `/v1/endpoints/${U}/schemas/invoice.paid` },
  "GET /v1/keys": { path: "/v1/keys" },
  "POST /v1/keys": { path: "/v1/keys", body: { name: "minted", scopes: ["keys:write"] } },
  "DELETE /v1/keys/{id}": { path: `/v1/keys/${U}` },
  "GET /v1/audit": { path: "/v1/audit" },
  "POST /v1/audit/config-applied": { path: "/v1/audit/config-applied", body: { sha256: "0".repeat(64), total: 0, applied: 0 } },
  "GET /v1/alert-channels": { path: "/v1/alert-channels" },
  // An unknown endpoint: an admitted call is refused (400) and creates nothing.
  "POST /v1/alert-channels": { path: "/v1/alert-channels", body: { name: "scoped", type: "slack", url: "http://127.0.0.1:9/", events: ["test"], endpointIds: [U] } },
  "DELETE /v1/alert-channels/{id}": { path: `/v1/alert-channels/${U}` },
  "POST /v1/alert-channels/{id}/test": { path: `/v1/alert-channels/${U}/test` },
  "GET /v1/providers": { path: "/v1/providers" },
};

let t: TestGateway;
/** Each operation that takes a key, and the scope it needs (`any`: every key). */
let needs: Map<string, Scope | "any">;

async function call(key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${t.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text && res.headers.get("content-type")?.startsWith("application/json") ? (JSON.parse(text) as Json) : {} };
}

const withoutRequestId = ({ requestId: _r, ...rest }: Json) => rest;

beforeAll(async () => {
  t = await startTestGateway();
  const doc = (await (await fetch(`${t.url}/v1/openapi.json`)).json()) as Json;
  needs = new Map();
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    if (!path.startsWith("/v1/")) continue;
    for (const [method, op] of Object.entries(item as Json)) {
      if (!METHODS.includes(method) || (Array.isArray(op.security) && op.security.length === 0)) continue;
      needs.set(`${method.toUpperCase()} ${path}`, (op["x-scope"] as Scope | undefined) ?? "any");
    }
  }
});
afterAll(async () => {
  await t.close();
});

describe("the scope matrix", () => {
  it("names a scope for every operation that takes a key; only the provider list is open to every key", () => {
    expect(new Set(Object.keys(REQUESTS))).toEqual(new Set(needs.keys()));
    expect([...needs].filter(([, scope]) => scope === "any").map(([op]) => op)).toEqual(["GET /v1/providers"]);
    for (const scope of needs.values()) if (scope !== "any") expect(SCOPES).toContain(scope);
  });

  it("admits every key whose scopes allow the operation and refuses every other with 403 forbidden naming the scope", async () => {
    const keys = await Promise.all(SCOPES.map(async (scope) => [scope, (await t.a.api.keys.create({ name: `only ${scope}`, scopes: [scope] })).key] as const));
    const refusedBy = new Map<string, string[]>();
    for (const [op, needed] of needs) {
      const [method, template] = op.split(" ") as [string, string];
      const { path, body } = REQUESTS[op]!;
      for (const [scope, key] of keys) {
        const res = await call(key, method, path, body);
        const where = `${scope} ${method} ${template}: ${res.status} ${JSON.stringify(res.body)}`;
        if (needed === "any" || scopeAllows([scope], needed)) {
          expect(res.status === 403 && res.body.error === "forbidden", where).toBe(false);
          expect(res.status, where).toBeLessThan(500);
        } else {
          expect(res.status, where).toBe(403);
          expect(withoutRequestId(res.body), where).toEqual({
            error: "forbidden",
            message: "The API key does not allow this; details.scope names the scope needed.",
            details: { scope: needed },
          });
          refusedBy.set(scope, [...(refusedBy.get(scope) ?? []), op]);
        }
      }
    }
    // `*` and `dashboard` are refused nothing; every narrow scope is refused something.
    expect(refusedBy.get("*")).toBeUndefined();
    expect(refusedBy.get("dashboard")).toBeUndefined();
    for (const scope of SCOPES.filter((s) => s !== "*" && s !== "dashboard")) expect(refusedBy.get(scope)?.length, scope).toBeGreaterThan(0);
  });
});

describe("a key restricted to endpoints", () => {
  it("answers every operation on any other endpoint, the account's own included, exactly as on an unknown id", async () => {
    const mine = await t.a.api.endpoints.create({ slug: "restricted-mine" });
    const sibling = await t.a.api.endpoints.create({ slug: "restricted-sibling" });
    const foreign = await t.b.api.endpoints.create({ slug: "restricted-foreign" });
    const [siblingEvent] = await t.append(t.a, sibling.id, [{ body: "sibling's" }]);
    const [foreignEvent] = await t.append(t.b, foreign.id, [{ body: "b's" }]);
    const restricted = await t.a.api.keys.create({ name: "restricted", scopes: ["*"], endpointIds: [mine.id] });

    const endpointOps = Object.entries(REQUESTS).filter(([op]) => op.includes("/v1/endpoints/{"));
    expect(endpointOps.length).toBeGreaterThanOrEqual(16);
    for (const [op, { path, body }] of endpointOps) {
      const method = op.split(" ")[0]!;
      const answers = [];
      for (const [endpointId, eventId] of [
        [sibling.id, siblingEvent!.id],
        [foreign.id, foreignEvent!.id],
        [U, U],
      ] as const) {
        const concrete = path.replace(U, endpointId).replace(`/events/${U}`, `/events/${eventId}`);
        answers.push(await call(restricted.key, method, concrete, body));
      }
      for (const answer of answers) expect(answer.status, `${op}: ${JSON.stringify(answer.body)}`).toBe(404);
      expect(withoutRequestId(answers[0]!.body), op).toEqual(withoutRequestId(answers[2]!.body));
      expect(withoutRequestId(answers[1]!.body), op).toEqual(withoutRequestId(answers[2]!.body));
    }
    // Nothing of the sibling changed, and its event is still there.
    expect((await t.a.api.endpoints.get(sibling.id)).displayName).toBe("restricted-sibling");
    expect((await t.a.api.events.get(sibling.id, siblingEvent!.id)).body).toBe("sibling's");

    const api = t.client(restricted.key);
    expect((await api.endpoints.list()).items.map((e) => e.id)).toEqual([mine.id]);
    expect((await api.endpoints.get(mine.id)).id).toBe(mine.id);
    const create = await call(restricted.key, "POST", "/v1/endpoints", {});
    expect([create.status, create.body.error, create.body.details]).toEqual([403, "forbidden", { field: "endpointIds" }]);
  });
});

describe("keys minting keys", () => {
  it("creates only keys within the creator's scopes and endpoints, and lists and revokes only those", async () => {
    const mine = await t.a.api.endpoints.create({ slug: "minting-mine" });
    const other = await t.a.api.endpoints.create({ slug: "minting-other" });
    const creator = await t.a.api.keys.create({ name: "creator", scopes: ["events:read", "keys:write"], endpointIds: [mine.id] });
    const mint = (body: Json) => call(creator.key, "POST", "/v1/keys", { name: "minted", ...body });

    for (const [scope, field] of [
      ["events:replay", "scopes"],
      ["*", "scopes"],
      ["dashboard", "scopes"],
      ["endpoints:read", "scopes"],
    ] as const) {
      const res = await mint({ scopes: ["events:read", scope], endpointIds: [mine.id] });
      expect([res.status, res.body.error, res.body.details], scope).toEqual([403, "forbidden", { scope, field }]);
    }
    for (const endpointIds of [[], undefined, [mine.id, other.id], [other.id]]) {
      const res = await mint({ scopes: ["events:read"], ...(endpointIds ? { endpointIds } : {}) });
      expect([res.status, res.body.error, res.body.details], JSON.stringify(endpointIds)).toEqual([403, "forbidden", { field: "endpointIds" }]);
    }
    const minted = await mint({ scopes: ["events:read"], endpointIds: [mine.id] });
    expect(minted.status).toBe(201);
    // The minted key is no wider: it cannot mint at all (no keys:write).
    expect((await call(minted.body.key as string, "POST", "/v1/keys", { name: "x", scopes: ["events:read"], endpointIds: [mine.id] })).body.details).toEqual({ scope: "keys:write" });

    // The creator sees itself and what it minted, not the account's wider keys, and cannot revoke those.
    const listed = (await call(creator.key, "GET", "/v1/keys")).body.items as { id: string }[];
    expect(listed.map((k) => k.id).sort()).toEqual([creator.id, minted.body.id].sort());
    const wide = (await t.a.api.keys.list()).items.find((k) => k.scopes.includes("*") && k.endpointIds.length === 0)!;
    const refused = await call(creator.key, "DELETE", `/v1/keys/${wide.id}`);
    const unknown = await call(creator.key, "DELETE", `/v1/keys/${U}`);
    expect(refused.status).toBe(404);
    expect(withoutRequestId(refused.body)).toEqual(withoutRequestId(unknown.body));
    expect((await call(creator.key, "DELETE", `/v1/keys/${minted.body.id}`)).status).toBe(204);
    expect((await call(minted.body.key as string, "GET", `/v1/endpoints/${mine.id}/events`)).status).toBe(401);
  });
});
