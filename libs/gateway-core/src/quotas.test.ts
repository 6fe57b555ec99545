import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { errorReply } from "@whc/api-model";
import { createOpenApiValidator, waitFor, type OpenApiValidator } from "@whc/testing";
import { errorTable } from "./errors-table.js";
import { startTestGateway, type TestAccount, type TestGateway } from "./testing/index.js";

/*
 * The quotas of design §14 over real HTTP, each answer checked against the served OpenAPI
 * document: the key's request rate, the account's endpoints, the key's wait long polls.
 */

const RPS = 5;
const WAITS = 2;
const ENDPOINTS = 4;
const KEYS = 3;

let t: TestGateway;
let validate: OpenApiValidator;
/** The rate's clock: stopped, so that a burst's count does not depend on how fast the machine is. */
const clock = { now: 1_800_000_000_000 };
beforeAll(async () => {
  t = await startTestGateway({ apiRps: RPS, waitsPerKey: WAITS, endpointQuota: ENDPOINTS, keyQuota: KEYS, waitPollMs: 200, now: () => clock.now });
  validate = createOpenApiValidator((await (await fetch(`${t.url}/v1/openapi.json`)).json()) as Record<string, unknown>);
});
afterAll(async () => {
  await t.close();
});

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, any>;
}

async function call(key: string | undefined, method: string, path: string, json?: unknown, signal?: AbortSignal): Promise<Answer> {
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  if (json !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${t.url}${path}`, { method, headers, body: json === undefined ? undefined : JSON.stringify(json), signal });
  const text = await res.text();
  const body = text ? (JSON.parse(text) as Record<string, any>) : {};
  validate(method, `${t.url}${path}`, res.status, res.headers, text ? body : undefined);
  return { status: res.status, headers: res.headers, body };
}

/** The one error shape, quota_exceeded, with exactly these details. */
function expectQuotaRefusal(answer: Answer, details: Record<string, unknown>) {
  expect(answer.status).toBe(429);
  expect(errorReply.parse(answer.body)).toEqual(answer.body);
  expect(answer.body).toMatchObject({ error: "quota_exceeded", message: errorTable.quota_exceeded.message, details });
  expect(answer.body.details).toEqual(details);
  expect(answer.body.requestId).toBe(answer.headers.get("x-request-id"));
}

describe("the key's request rate (WHC_QUOTA_API_RPS)", () => {
  it("admits a burst of twice the rate, then answers 429 quota_exceeded with Retry-After and the RateLimit headers", async () => {
    const own: TestAccount = await t.account();
    const answers = await Promise.all(Array.from({ length: 3 * RPS }, () => call(own.key, "GET", "/v1/endpoints")));
    const refused = answers.filter((a) => a.status === 429);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(2 * RPS);
    expect(refused).toHaveLength(RPS);
    for (const r of refused) {
      expectQuotaRefusal(r, { quota: "api_rate" });
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(r.headers.get("ratelimit-limit")).toBe(String(RPS));
      expect(r.headers.get("ratelimit-remaining")).toBe("0");
      expect(Number(r.headers.get("ratelimit-reset"))).toBeGreaterThanOrEqual(1);
    }
  });

  it("admits the key again as time passes: the rate a second, never more than the burst", async () => {
    const own = await t.account();
    const admitted = async (n: number) =>
      (await Promise.all(Array.from({ length: n }, () => call(own.key, "GET", "/v1/endpoints")))).filter((a) => a.status === 200).length;
    expect(await admitted(3 * RPS)).toBe(2 * RPS);
    clock.now += 1000;
    expect(await admitted(3 * RPS)).toBe(RPS);
    clock.now += 60_000;
    expect(await admitted(3 * RPS)).toBe(2 * RPS);
  });

  it("counts every authenticated route, and leaves another key of the account, and another account, served", async () => {
    const own = await t.account();
    const ep = (await call(own.key, "POST", "/v1/endpoints", {})).body as { id: string };
    const paths = ["/v1/endpoints", `/v1/endpoints/${ep.id}`, `/v1/endpoints/${ep.id}/events`, "/v1/providers"];
    const answers = await Promise.all(Array.from({ length: 4 * RPS }, (_, i) => call(own.key, "GET", paths[i % paths.length]!)));
    // One create and 2 * RPS - 1 of these got in; the rest were refused, whatever the route.
    expect(answers.filter((a) => a.status !== 429)).toHaveLength(2 * RPS - 1);
    const refusedPaths = new Set(answers.flatMap((a, i) => (a.status === 429 ? [paths[i % paths.length]] : [])));
    expect(refusedPaths.size).toBe(paths.length);
    // The throttled key's neighbours are untouched.
    expect((await call(t.b.key, "GET", "/v1/endpoints")).status).toBe(200);
    const sameAccount = await t.account(own.name);
    expect(sameAccount.accountId).toBe(own.accountId);
    expect((await call(sameAccount.key, "GET", `/v1/endpoints/${ep.id}`)).status).toBe(200);
  });

  it("counts no unauthenticated request against a key, and no open route", async () => {
    const own = await t.account();
    for (let i = 0; i < 4 * RPS; i += 1) {
      expect((await call(undefined, "GET", "/v1/endpoints")).status).toBe(401);
      expect((await call(`whc_${"Z".repeat(40)}`, "GET", "/v1/endpoints")).status).toBe(401);
      expect((await call(own.key, "GET", "/v1/openapi.json")).status).toBe(200);
      expect((await fetch(`${t.url}/healthz`, { headers: { authorization: `Bearer ${own.key}` } })).status).toBe(200);
    }
    const answers = await Promise.all(Array.from({ length: 2 * RPS }, () => call(own.key, "GET", "/v1/endpoints")));
    expect(answers.map((a) => a.status)).toEqual(Array(2 * RPS).fill(200));
  });
});

describe("the account's endpoints (WHC_QUOTA_ENDPOINTS)", () => {
  it("refuses the create past the quota with 429, details naming the quota and its limit, and no Retry-After", async () => {
    const own = await t.account();
    for (let i = 0; i < ENDPOINTS; i += 1) expect((await call(own.key, "POST", "/v1/endpoints", {})).status).toBe(201);
    const refused = await call(own.key, "POST", "/v1/endpoints", { slug: "one-too-many" });
    expectQuotaRefusal(refused, { quota: "endpoints", limit: ENDPOINTS });
    expect(refused.headers.get("retry-after")).toBeNull();
    expect(refused.headers.get("ratelimit-limit")).toBeNull();
    // Nothing was stored; another account creates as before; a delete makes room.
    const listed = await call(own.key, "GET", "/v1/endpoints");
    expect(listed.body.items).toHaveLength(ENDPOINTS);
    expect((await call(t.b.key, "POST", "/v1/endpoints", {})).status).toBe(201);
    expect((await call(own.key, "DELETE", `/v1/endpoints/${listed.body.items[0].id}`)).status).toBe(204);
    expect((await call(own.key, "POST", "/v1/endpoints", { slug: "one-too-many" })).status).toBe(201);
  });

  it("lets exactly the quota's worth of concurrent creates through", async () => {
    const own = await t.account();
    const keys = [own.key, (await t.account(own.name)).key];
    // Two keys of one account, each within its rate: the account's quota still holds.
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => call(keys[i % 2], "POST", "/v1/endpoints", {})));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(ENDPOINTS);
    for (const a of answers.filter((x) => x.status !== 201)) expectQuotaRefusal(a, { quota: "endpoints", limit: ENDPOINTS });
    expect((await call(own.key, "GET", "/v1/endpoints")).body.items).toHaveLength(ENDPOINTS);
  });
});

describe("the account's usable keys (WHC_QUOTA_KEYS)", () => {
  it("refuses the key past the quota with 429, details naming the quota and its limit; a revoked key frees its place; ensured keys pass", async () => {
    const own = await t.account();
    const made: string[] = [];
    // The account's first key is one of its usable keys.
    for (let i = 1; i < KEYS; i += 1) {
      const created = await call(own.key, "POST", "/v1/keys", { name: `ci ${i}`, scopes: ["events:read"] });
      expect(created.status).toBe(201);
      made.push(created.body.id as string);
    }
    const refused = await call(own.key, "POST", "/v1/keys", { name: "one too many", scopes: ["events:read"] });
    expectQuotaRefusal(refused, { quota: "keys", limit: KEYS });
    expect(refused.headers.get("retry-after")).toBeNull();
    expect(refused.headers.get("ratelimit-limit")).toBeNull();
    // Nothing was stored, nor audited; another account creates as before.
    expect((await call(own.key, "GET", "/v1/keys")).body.items.map((k: { name: string }) => k.name)).not.toContain("one too many");
    expect((await call(own.key, "GET", "/v1/audit?action=key.created")).body.items).toHaveLength(KEYS - 1);
    expect((await call(t.b.key, "POST", "/v1/keys", { name: "theirs", scopes: ["events:read"] })).status).toBe(201);
    // A revoked key is no longer usable: its place is free, and it stays listed.
    expect((await call(own.key, "DELETE", `/v1/keys/${made[0]}`)).status).toBe(204);
    expect((await call(own.key, "POST", "/v1/keys", { name: "in its place", scopes: ["events:read"] })).status).toBe(201);
    expect((await call(own.key, "GET", "/v1/keys")).body.items).toHaveLength(KEYS + 1);
    // Bootstrap keys and an account's first key (EnsureApiKey) are never refused; they count.
    const more = await t.account(own.name);
    expect((await call(more.key, "GET", "/v1/keys")).status).toBe(200);
    expectQuotaRefusal(await call(more.key, "POST", "/v1/keys", { name: "still full", scopes: ["events:read"] }), { quota: "keys", limit: KEYS });
  });
});

describe("the key's wait long polls (WHC_QUOTA_WAITS_PER_KEY)", () => {
  it("refuses one more concurrent wait than the quota with Retry-After 1, and takes one again once a poll ends", async () => {
    const own = await t.account();
    const ep = (await call(own.key, "POST", "/v1/endpoints", {})).body as { id: string };
    const waitPath = `/v1/endpoints/${ep.id}/events?wait=30`;
    const held = Array.from({ length: WAITS }, () => new AbortController());
    const polls = held.map((c) => call(own.key, "GET", waitPath, undefined, c.signal).catch(() => undefined));
    try {
      await waitFor(() => t.captureSubscribers() >= WAITS || undefined, { what: "the held polls" });
      const refused = await call(own.key, "GET", waitPath);
      expectQuotaRefusal(refused, { quota: "waits", limit: WAITS });
      expect(refused.headers.get("retry-after")).toBe("1");
      // A list that does not wait is no long poll; another key's waits are its own.
      expect((await call(own.key, "GET", `/v1/endpoints/${ep.id}/events`)).status).toBe(200);
      expect((await call(own.key, "GET", `/v1/endpoints/${ep.id}/events?wait=0`)).status).toBe(200);
      const otherKey = await t.account(own.name);
      expect((await call(otherKey.key, "GET", `/v1/endpoints/${ep.id}/events?wait=1`)).status).toBe(200);
      // One poll hangs up: its slot is free again.
      held[0]!.abort();
      await waitFor(() => t.captureSubscribers() < WAITS || undefined, { what: "the hung-up poll to end" });
      expect((await call(own.key, "GET", `/v1/endpoints/${ep.id}/events?wait=1`)).status).toBe(200);
    } finally {
      for (const c of held) c.abort();
      await Promise.all(polls);
    }
  });

  it("makes the client's follow() wait Retry-After and go on, instead of ending", async () => {
    const own = await t.account();
    const ep = await own.api.endpoints.create({});
    const held = Array.from({ length: WAITS }, () => new AbortController());
    const polls = held.map((c) => call(own.key, "GET", `/v1/endpoints/${ep.id}/events?wait=30`, undefined, c.signal).catch(() => undefined));
    const stop = new AbortController();
    const retries: { code: string; quota: unknown; delayMs: number }[] = [];
    try {
      await waitFor(() => t.captureSubscribers() >= WAITS || undefined, { what: "the held polls" });
      const follow = own.api.follow(ep.id, {
        signal: stop.signal,
        waitSeconds: 5,
        onRetry: (err, delayMs) => {
          retries.push({ code: err.code, quota: err.details.quota, delayMs });
          // Throttled once: the held polls end, and a capture arrives.
          for (const c of held) c.abort();
        },
      })[Symbol.asyncIterator]();
      const next = follow.next();
      await waitFor(() => retries.length > 0 || undefined, { what: "the throttled poll" });
      const [appended] = await t.append(own, ep.id, [{ body: "after the wait" }]);
      t.notify(own, ep.id, [appended!]);
      expect((await next).value).toMatchObject({ id: appended!.id });
      expect(retries[0]).toEqual({ code: "quota_exceeded", quota: "waits", delayMs: 1000 });
    } finally {
      stop.abort();
      for (const c of held) c.abort();
      await Promise.all(polls);
    }
  });
});
