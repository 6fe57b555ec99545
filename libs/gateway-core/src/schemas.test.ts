import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { Ajv2020 } from "ajv/dist/2020.js";
import { SCHEMA_LIMITS, eventDetail, schemaList, type EventDetailJson } from "@whc/api-model";
import { apiClient, createOpenApiValidator } from "@whc/testing";
import { refusal, startTestGateway, type TestGateway } from "./testing/index.js";

/*
 * Schemas and drift as a user sees them (design §19): Stripe-shaped captures learned, then a
 * capture with a new field, one without a field every sample had and one with a field of
 * another type, each flagged on its detail and found by the list filter; the learned JSON
 * Schema; the limits; one account's schemas invisible to another.
 */

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
});
afterAll(async () => {
  await t.close();
});

/** A Stripe invoice.paid event, as Stripe sends it (the values vary, the shape does not). */
function invoicePaid(i: number, edit: (e: Record<string, any>) => void = () => undefined): string {
  const event: Record<string, any> = {
    id: `evt_1NG8Du2eZvKYlo2C${String(i).padStart(8, "0")}`,
    object: "event",
    api_version: "2024-06-20",
    created: 1_700_000_000 + i,
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type: "invoice.paid",
    data: {
      object: {
        id: `in_${i}`,
        object: "invoice",
        amount_due: 2000 + i,
        amount_paid: 2000 + i,
        currency: "usd",
        customer: `cus_${i}`,
        paid: true,
        lines: { object: "list", data: [{ id: `il_${i}`, amount: 2000 + i, description: null }], has_more: false },
        metadata: {},
      },
    },
  };
  edit(event);
  return JSON.stringify(event);
}

const stripe = (body: string) => ({ body, provider: "stripe", canonicalEventType: "invoice.paid", headers: [["Content-Type", "application/json"]] as [string, string][] });

describe("schemas and drift (design §19)", () => {
  let endpointId: string;
  let bodies: string[];
  let drifted: { added: string; missing: string; retyped: string };

  beforeAll(async () => {
    endpointId = (await t.a.api.endpoints.create({ provider: "stripe" })).id;
    bodies = Array.from({ length: 25 }, (_, i) => invoicePaid(i));
    // Learned in five batches of five, as captures come.
    for (let i = 0; i < 25; i += 5) {
      await t.append(t.a, endpointId, bodies.slice(i, i + 5).map(stripe));
      await t.learnSchemas();
    }
    const odd = [
      invoicePaid(25, (e) => (e.data.object.tax = { rate: 0.2, amount: 400 })),
      invoicePaid(26, (e) => delete e.data.object.currency),
      invoicePaid(27, (e) => (e.data.object.amount_paid = "2000.00")),
    ];
    bodies.push(...odd);
    const [added, missing, retyped] = await t.append(t.a, endpointId, odd.map(stripe));
    await t.learnSchemas();
    drifted = { added: added!.id, missing: missing!.id, retyped: retyped!.id };
  });

  it("shows each drifted capture's change on its detail, and nothing on the others", async () => {
    const detail = async (id: string) => eventDetail.strict().parse(await t.a.api.events.get(endpointId, id)) as EventDetailJson;
    expect((await detail(drifted.added)).schemaDrift).toEqual([{ path: "data.object.tax", change: "added", seen: [], now: "object" }]);
    expect((await detail(drifted.missing)).schemaDrift).toEqual([{ path: "data.object.currency", change: "missing", seen: ["string"], now: "absent" }]);
    expect((await detail(drifted.retyped)).schemaDrift).toEqual([{ path: "data.object.amount_paid", change: "type_changed", seen: ["integer"], now: "string" }]);
    const first = (await t.a.api.events.list(endpointId, { limit: "200" })).items.at(-1)!;
    expect((await detail(first.id)).schemaDrift).toBeUndefined();
  });

  it("filters the list on schemaDrift, pages it with the usual cursors, and refuses another value", async () => {
    const seen: string[] = [];
    let page = await t.a.api.events.list(endpointId, { schemaDrift: "true", limit: "2" });
    seen.push(...page.items.map((e) => e.id));
    expect(page.items).toHaveLength(2);
    page = await t.a.api.events.list(endpointId, { schemaDrift: "true", limit: "2", before: page.nextBefore!, beforeId: page.nextBeforeId! });
    seen.push(...page.items.map((e) => e.id));
    expect(page.nextBefore).toBeUndefined();
    expect(seen).toEqual([drifted.retyped, drifted.missing, drifted.added]);
    const clean = await t.a.api.events.list(endpointId, { schemaDrift: "false", limit: "200" });
    expect(clean.items).toHaveLength(25);
    expect(clean.items.map((e) => e.id)).not.toContain(drifted.added);
    const err = await refusal(t.a.api.events.list(endpointId, { schemaDrift: "yes" as "true" }));
    expect([err.status, err.code, err.details]).toEqual([400, "validation_failed", expect.objectContaining({ field: "schemaDrift" })]);
  });

  it("lists what was learned per event type, in the documented shape", async () => {
    const validated = apiClient(t.url, t.a.key, createOpenApiValidator((await (await fetch(`${t.url}/v1/openapi.json`)).json()) as object));
    const res = await validated.get(`/v1/endpoints/${endpointId}/schemas`);
    expect(res.status).toBe(200);
    const { items } = schemaList.strict().parse(res.body);
    expect(items).toHaveLength(1);
    const [schema] = items;
    expect(schema).toMatchObject({ eventType: "invoice.paid", samples: 28 });
    const field = (path: string) => schema!.fields.find((f) => f.path === path);
    expect(field("data.object.amount_paid")).toEqual({ path: "data.object.amount_paid", types: ["string", "integer"], presentRatio: 1 });
    expect(field("data.object.currency")?.presentRatio).toBeCloseTo(27 / 28);
    expect(field("data.object.tax.rate")).toEqual({ path: "data.object.tax.rate", types: ["number"], presentRatio: 1 / 28 });
    expect(field("data.object.lines.data[].description")?.types).toEqual(["null"]);
    expect(field("request.id")?.types).toEqual(["null"]);
    expect(schema!.fields[0]?.path).toBe("id");
    // No value reaches the answer.
    for (const value of ["evt_1NG8Du2eZvKYlo2C", "cus_1", "usd", "2024-06-20"]) expect(JSON.stringify(items)).not.toContain(value);
  });

  it("answers the type's JSON Schema (draft 2020-12), against which every learned body validates", async () => {
    const validated = apiClient(t.url, t.a.key, createOpenApiValidator((await (await fetch(`${t.url}/v1/openapi.json`)).json()) as object));
    const res = await validated.get(`/v1/endpoints/${endpointId}/schemas/invoice.paid`);
    expect(res.status).toBe(200);
    const schema = res.body as Record<string, any>;
    expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(schema.properties.data.properties.object.properties.amount_paid.type).toEqual(["string", "integer"]);
    expect(schema.properties.data.properties.object.required).not.toContain("currency");
    expect(schema.properties.data.properties.object.required).toContain("customer");
    expect(schema.required).toEqual(expect.arrayContaining(["id", "type", "data", "created"]));
    // Strict: an unknown keyword, a required member without its property, a keyword on the wrong type all fail.
    const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
    const validate = ajv.compile(schema);
    for (const body of bodies) expect(validate(JSON.parse(body)), JSON.stringify(validate.errors)).toBe(true);
    // It says something: a body missing a field every sample had does not validate.
    expect(validate(JSON.parse(invoicePaid(99, (e) => delete e.type)))).toBe(false);
    expect(validate(JSON.parse(invoicePaid(99, (e) => (e.created = "yesterday"))))).toBe(false);
  });

  it("learns captures without an event type under *, and types with a slash URL-encoded", async () => {
    const ep = (await t.a.api.endpoints.create({})).id;
    await t.append(t.a, ep, [
      { body: JSON.stringify({ hello: "world" }) },
      { body: JSON.stringify({ id: 1, line_items: [{ sku: "x" }] }), provider: "shopify", canonicalEventType: "orders/create" },
    ]);
    await t.learnSchemas();
    expect((await t.a.api.schemas.list(ep)).items.map((s) => s.eventType)).toEqual(["*", "orders/create"]);
    expect((await t.a.api.schemas.get(ep, "*")).properties).toEqual({ hello: { type: "string" } });
    expect((await t.a.api.schemas.get(ep, "orders/create")).properties).toMatchObject({ line_items: { type: "array", items: { type: "object" } } });
    const unknown = await refusal(t.a.api.schemas.get(ep, "never.seen"));
    expect([unknown.status, unknown.code]).toEqual([404, "not_found"]);
    const long = await refusal(t.a.api.schemas.get(ep, "x".repeat(201)));
    expect([long.status, long.code, long.details]).toEqual([400, "validation_failed", expect.objectContaining({ field: "eventType" })]);
  });

  it("keeps one account's schemas from another, and an endpoint's from another's", async () => {
    const err = await refusal(t.b.api.schemas.list(endpointId));
    expect([err.status, err.code]).toEqual([404, "not_found"]);
    expect((await refusal(t.b.api.schemas.get(endpointId, "invoice.paid"))).status).toBe(404);
    const other = (await t.a.api.endpoints.create({})).id;
    expect((await t.a.api.schemas.list(other)).items).toEqual([]);
  });

  it("learns at most 500 paths of a type, and reads no further than the limits of a hostile body", async () => {
    const ep = (await t.a.api.endpoints.create({})).id;
    const wide = JSON.stringify(Object.fromEntries(Array.from({ length: SCHEMA_LIMITS.pathsPerType + 1 }, (_, i) => [`field_${i}`, i])));
    let deep: unknown = 1;
    for (let i = 0; i < 40; i += 1) deep = { level: deep };
    const huge = JSON.stringify({ blob: "x".repeat(SCHEMA_LIMITS.bodyBytes) });
    await t.append(t.a, ep, [
      { body: wide, canonicalEventType: "wide" },
      { body: JSON.stringify(deep), canonicalEventType: "deep" },
      { body: huge, canonicalEventType: "huge" },
    ]);
    await t.learnSchemas();
    const { items } = await t.a.api.schemas.list(ep);
    expect(items.map((s) => s.eventType)).toEqual(["deep", "wide"]);
    const [deepSchema, wideSchema] = items;
    expect(wideSchema!.fields).toHaveLength(SCHEMA_LIMITS.pathsPerType);
    expect(wideSchema!.fields.map((f) => f.path)).not.toContain(`field_${SCHEMA_LIMITS.pathsPerType}`);
    expect(deepSchema!.fields).toHaveLength(SCHEMA_LIMITS.depth);
    expect(deepSchema!.fields.at(-1)!.types).toEqual(["object"]);
  });
});
