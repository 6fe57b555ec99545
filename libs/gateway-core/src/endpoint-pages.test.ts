import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { createApiClient, type ApiClient, type EndpointListJson } from "@whc/api-model";
import { createOpenApiValidator } from "@whc/testing";
import { errorTable } from "./errors-table.js";
import { refusal, startTestGateway, type TestAccount, type TestGateway } from "./testing/index.js";

/*
 * GET /v1/endpoints in pages (design §14): by id ascending, `limit` 1-500 (default 100),
 * `after` an endpoint id, `nextAfter` only when more follow. Every answer is checked against
 * the served OpenAPI document.
 */

const COUNT = 250;
let t: TestGateway;
let owner: TestAccount;
let api: ApiClient;
/** The owner's endpoint ids in creation order. */
let ids: string[];

beforeAll(async () => {
  t = await startTestGateway();
  const validate = createOpenApiValidator((await (await fetch(`${t.url}/v1/openapi.json`)).json()) as Record<string, unknown>);
  const validating: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    const text = await res.clone().text();
    validate(init?.method ?? "GET", String(input), res.status, res.headers, text ? (JSON.parse(text) as unknown) : undefined);
    return res;
  };
  owner = await t.account();
  api = createApiClient({ baseUrl: t.url, apiKey: owner.key, fetch: validating });
  ids = [];
  // Ten at a time: UUIDv7 ids of one batch may share a millisecond, so order is read back, not assumed.
  for (let i = 0; i < COUNT; i += 10) {
    const batch = await Promise.all(Array.from({ length: 10 }, () => api.endpoints.create({})));
    ids.push(...batch.map((e) => e.id));
  }
  ids.sort();
  // Another account's endpoints sit between the owner's in id order; they never show.
  await Promise.all(Array.from({ length: 5 }, () => t.b.api.endpoints.create({})));
}, 120_000);
afterAll(async () => {
  await t.close();
});

async function walk(limit: number, after?: string): Promise<EndpointListJson[]> {
  const pages: EndpointListJson[] = [];
  let cursor = after;
  do {
    const page = await api.endpoints.page({ limit: String(limit), ...(cursor ? { after: cursor } : {}) });
    pages.push(page);
    cursor = page.nextAfter;
  } while (cursor);
  return pages;
}

describe("GET /v1/endpoints in pages", () => {
  it("answers every endpoint exactly once, by id ascending, with limit 1, 100 and 500", async () => {
    for (const limit of [1, 100, 500]) {
      const pages = await walk(limit);
      expect(pages.flatMap((p) => p.items.map((e) => e.id)), `limit ${limit}`).toEqual(ids);
      expect(pages).toHaveLength(Math.ceil(COUNT / limit));
      // nextAfter is the last id of each page but the last, which has none.
      for (const [i, p] of pages.entries()) expect(p.nextAfter).toBe(i < pages.length - 1 ? p.items.at(-1)!.id : undefined);
    }
  }, 120_000);

  it("answers the first 100 without parameters, as the unpaged list's callers get it", async () => {
    const first = await api.endpoints.list();
    expect(first.items.map((e) => e.id)).toEqual(ids.slice(0, 100));
    expect(first.nextAfter).toBe(ids[99]);
    expect((await api.endpoints.all()).map((e) => e.id)).toEqual(ids);
  });

  it("goes on after an endpoint that was deleted", async () => {
    const gone = ids[119]!;
    await api.endpoints.delete(gone);
    ids.splice(119, 1);
    const page = await api.endpoints.page({ limit: "5", after: gone });
    expect(page.items.map((e) => e.id)).toEqual(ids.slice(119, 124));
    expect((await walk(100, gone.toUpperCase())).flatMap((p) => p.items.map((e) => e.id))).toEqual(ids.slice(119));
    const tail = await api.endpoints.page({ after: ids.at(-1)! });
    expect(tail).toEqual({ items: [] });
  });

  it("refuses a bad limit or after with validation_failed naming the parameter", async () => {
    const cases: [Record<string, string>, string, string][] = [
      [{ limit: "0" }, "limit", "range"],
      [{ limit: "501" }, "limit", "range"],
      [{ limit: "-1" }, "limit", "pattern"],
      [{ limit: "ten" }, "limit", "pattern"],
      [{ limit: "99999" }, "limit", "pattern"],
      [{ after: "nope" }, "after", "format"],
      [{ after: `${ids[0]!}0` }, "after", "format"],
    ];
    for (const [query, field, reason] of cases) {
      const err = await refusal(api.endpoints.page(query));
      expect([err.status, err.code, err.message], JSON.stringify(query)).toEqual([400, "validation_failed", errorTable.validation_failed.message]);
      expect(err.details, JSON.stringify(query)).toEqual({ field, reason });
    }
  });
});
