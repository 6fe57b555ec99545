import { afterEach, describe, expect, it } from "vitest";
import { createHash, randomUUID } from "node:crypto";
import path from "node:path";
import { Code, ConnectError, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import { CatalogService, type CapturedEvent } from "@whc/contracts";
import { SCHEMA_LIMITS, decodeBodyShape } from "@whc/api-model";
// The service is tested over a real store (a test-only cycle, allowed in eslint.config.js).
import { openSqliteStore } from "@whc/catalog-sqlite";
import { createLogger } from "@whc/logging";
import { serverInterceptor } from "@whc/rpc";
import { tempDir } from "@whc/testing";
import { createCatalogService } from "./service.js";
import { createSchemaLearner, type SchemaLearner } from "./schema-learner.js";
import { driftOf, learnShape, newSchema, openSchema, parentPath } from "./schemas.js";
import type { CatalogStore } from "./ports.js";
import type { SchemaDriftNotice, SchemaObservation } from "./types.js";
import { INVOICE, shapeText } from "./testing/schema-contract.js";

/*
 * Schemas and drift through the catalog service (design §19; ADR 0090): an append hands the
 * shapes of what it stored to the learner, which learns them after the commit; drift shows on
 * the event and in the list filter; the schema RPCs answer one account's endpoint only.
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startCatalog(onDrift?: (n: readonly SchemaDriftNotice[]) => void) {
  const dir = tempDir("whc-catalog-schemas-");
  const store = openSqliteStore({ file: path.join(dir.path, "catalog.db") });
  const learner = createSchemaLearner(store, { delayMs: 5, onDrift });
  cleanups.push(async () => {
    await learner.close();
    await store.close();
    dir.remove();
  });
  const service = createCatalogService(store, { schemaLearner: learner });
  const transport = createRouterTransport((router) => router.service(CatalogService, service), {
    router: { interceptors: [serverInterceptor(createLogger("catalog-test", "silent"))] },
  });
  return { catalog: createClient(CatalogService, transport), learner };
}

type Catalog = Client<typeof CatalogService>;

async function accountWithEndpoint(catalog: Catalog) {
  const name = `acct-${randomUUID()}`;
  const { key } = await catalog.ensureApiKey({ accountName: name, keyHash: createHash("sha256").update(name).digest(), prefix: "whc_t" });
  const accountId = key!.accountId;
  const { endpoint } = await catalog.createEndpoint({
    endpoint: { accountId, slug: `ep-${randomUUID().slice(0, 8)}`, displayName: "Learned", operatingMode: "capture", status: "active", provider: "stripe", source: "api" },
  });
  return { accountId, endpointId: endpoint!.id };
}

function captured(accountId: string, endpointId: string, bodyShape: string, canonicalEventType = "invoice.paid"): CapturedEvent {
  return {
    $typeName: "webhookcapture.catalog.v1.CapturedEvent",
    accountId,
    endpointId,
    method: "POST",
    remoteIp: "203.0.113.1",
    canonicalEventType,
    provider: "stripe",
    verification: "unverified",
    verificationFailureReason: "",
    responseCode: 200,
    truncated: false,
    originalSizeBytes: 10n,
    wrappedKey: new Uint8Array(0),
    keyId: "",
    sealedRequest: new Uint8Array(0),
    body: undefined,
    searchTokens: new Uint8Array(0),
    diagnosticJson: "",
    forwardedResponseJson: "",
    sequenceStatuses: [],
    forwardTarget: "",
    forwardScheduled: false,
    redactionsJson: "",
    bodyShape,
    deliveries: [],
    dedupeKey: new Uint8Array(0),
    dedupeWindowMs: 0n,
  };
}

async function append(catalog: Catalog, captures: CapturedEvent[]): Promise<string[]> {
  const { events } = await catalog.appendEvents({ captures });
  return events.map((e) => e.id);
}

async function code(call: Promise<unknown>): Promise<Code> {
  const err = await call.then(
    () => expect.unreachable("the call succeeded"),
    (e: unknown) => e,
  );
  return ConnectError.from(err).code;
}

describe("schemas through the catalog service (design §19)", () => {
  it("learns after the append answered, and shows each capture's drift on its event and in the list filter", async () => {
    const notices: SchemaDriftNotice[] = [];
    const { catalog, learner } = await startCatalog((n) => notices.push(...n));
    const { accountId, endpointId } = await accountWithEndpoint(catalog);
    await append(catalog, Array.from({ length: 25 }, () => captured(accountId, endpointId, shapeText(INVOICE))));
    const [retyped] = await append(catalog, [captured(accountId, endpointId, shapeText({ ...INVOICE, created: "string" }))]);
    // A capture without a shape (not JSON, metadata only) is neither learned nor judged.
    const [plain] = await append(catalog, [captured(accountId, endpointId, "")]);
    await learner.flush();

    const { event } = await catalog.getEvent({ accountId, endpointId, eventId: retyped! });
    expect(JSON.parse(event!.schemaDriftJson)).toEqual([{ path: "created", change: "type_changed", seen: ["integer"], now: "string" }]);
    expect((await catalog.getEvent({ accountId, endpointId, eventId: plain! })).event!.schemaDriftJson).toBe("");
    const drifted = await catalog.listEvents({ accountId, endpointId, schemaDrift: true, limit: 50 });
    expect(drifted.events.map((e) => e.id)).toEqual([retyped]);
    expect((await catalog.listEvents({ accountId, endpointId, schemaDrift: false, limit: 50 })).events).toHaveLength(26);
    expect(notices).toEqual([expect.objectContaining({ accountId, endpointId, eventType: "invoice.paid", eventId: retyped, count: 1 })]);

    const { schemas } = await catalog.listSchemas({ accountId, endpointId });
    expect(schemas.map((s) => [s.eventType, s.samples])).toEqual([["invoice.paid", 26n]]);
    const { schema } = await catalog.getSchema({ accountId, endpointId, eventType: "invoice.paid" });
    expect(schema!.paths.find((p) => p.path === "created")).toMatchObject({ types: ["string", "integer"], present: 26n });
  });

  it("learns captures without an event type under *, and answers another account's endpoint as not found", async () => {
    const { catalog, learner } = await startCatalog();
    const mine = await accountWithEndpoint(catalog);
    const theirs = await accountWithEndpoint(catalog);
    await append(catalog, [captured(mine.accountId, mine.endpointId, shapeText({ ok: "boolean" }), "")]);
    await learner.flush();
    expect((await catalog.getSchema({ ...mine, eventType: "*" })).schema!.samples).toBe(1n);
    expect(await code(catalog.listSchemas({ accountId: theirs.accountId, endpointId: mine.endpointId }))).toBe(Code.NotFound);
    expect(await code(catalog.getSchema({ accountId: theirs.accountId, endpointId: mine.endpointId, eventType: "*" }))).toBe(Code.NotFound);
    expect(await code(catalog.getSchema({ ...mine, eventType: "never.seen" }))).toBe(Code.NotFound);
    expect(await code(catalog.getSchema({ ...mine, eventType: "" }))).toBe(Code.InvalidArgument);
    expect(await code(catalog.listSchemas({ accountId: mine.accountId, endpointId: "not-a-uuid" }))).toBe(Code.InvalidArgument);
  });
});

describe("drift rules", () => {
  const learned = (times = 25) => {
    const schema = openSchema(newSchema({ accountId: "a", endpointId: "e", eventType: "t", receivedAt: 1 }));
    for (let i = 0; i < times; i += 1) learnShape(schema, decodeBodyShape(shapeText(INVOICE))!, i);
    return schema;
  };
  const drift = (times: number, paths: Parameters<typeof shapeText>[0], partial = false) => driftOf(learned(times), decodeBodyShape(shapeText(paths, partial))!);

  it("judges nothing before 20 samples", () => {
    expect(drift(19, { id: "integer" })).toEqual([]);
    expect(drift(20, { ...INVOICE, id: "integer" })).toEqual([{ path: "id", change: "type_changed", seen: ["string"], now: "integer" }]);
  });

  it("reports the outermost path of a new or missing subtree, never an empty array's elements", () => {
    expect(drift(25, { ...INVOICE, meta: "object", "meta.a": "string", "meta.a.b": "null" })).toEqual([{ path: "meta", change: "added", seen: [], now: "object" }]);
    const withoutData = Object.fromEntries(Object.entries(INVOICE).filter(([p]) => !p.startsWith("data")));
    expect(drift(25, withoutData)).toEqual([{ path: "data", change: "missing", seen: ["object"], now: "absent" }]);
    const emptyLines = Object.fromEntries(Object.entries(INVOICE).filter(([p]) => !p.startsWith("data.object.lines[]")));
    expect(drift(25, emptyLines)).toEqual([]);
  });

  it("reports no missing path of a partial shape, and an added one only while the schema has room", () => {
    expect(drift(25, { id: "string" }, true)).toEqual([]);
    const full = learned(20);
    for (let i = full.byPath.size; i < SCHEMA_LIMITS.pathsPerType; i += 1) full.byPath.set(`p${i}`, { path: `p${i}`, mask: 1, present: 0 });
    expect(driftOf(full, decodeBodyShape(shapeText({ ...INVOICE, brand_new: "string" }))!)).toEqual([]);
  });

  it("reads a path's parent through members and elements", () => {
    expect(parentPath("data.object.lines[].id")).toBe("data.object.lines[]");
    expect(parentPath("data.object.lines[]")).toBe("data.object.lines");
    expect(parentPath("id")).toBe("");
  });
});

describe("the schema learner", () => {
  function fakeStore(fail = false) {
    const calls: SchemaObservation[][] = [];
    const store: Pick<CatalogStore, "learnSchemas"> = {
      async learnSchemas(observations) {
        calls.push([...observations]);
        if (fail) throw new Error("store down");
        return observations.map((o) => ({ accountId: o.accountId, endpointId: o.endpointId, eventType: o.eventType, eventId: o.eventId, changes: [], count: 1 }));
      },
    };
    return { store, calls };
  }
  const obs = (i: number): SchemaObservation => ({ accountId: "a", endpointId: "e", eventType: "t", eventId: `ev${i}`, receivedAt: i, shape: "." });

  it("learns what appends observed together, in batches, one store call at a time", async () => {
    const { store, calls } = fakeStore();
    const notices: SchemaDriftNotice[] = [];
    const learner: SchemaLearner = createSchemaLearner(store, { delayMs: 60_000, batch: 3, onDrift: (n) => void notices.push(...n) });
    learner.observe([obs(1), obs(2)]);
    learner.observe([obs(3), obs(4)]);
    expect(calls).toEqual([]);
    await learner.flush();
    expect(calls.map((c) => c.map((o) => o.eventId))).toEqual([["ev1", "ev2", "ev3"], ["ev4"]]);
    expect(notices.map((n) => n.eventId)).toEqual(["ev1", "ev2", "ev3", "ev4"]);
  });

  it("drops what passes its queue or what the store refuses, and what comes after it closed", async () => {
    const { store } = fakeStore(true);
    const warnings: string[] = [];
    const learner = createSchemaLearner(store, { delayMs: 60_000, maxQueued: 2, logger: { warn: (_o, msg) => void warnings.push(msg) } });
    learner.observe([obs(1), obs(2), obs(3)]);
    expect(learner.dropped).toBe(1);
    await learner.close();
    expect(learner.dropped).toBe(3);
    expect(warnings).toEqual(["schemas not learned"]);
    learner.observe([obs(4)]);
    expect(learner.dropped).toBe(4);
  });

  it("logs a hook that throws, and goes on learning", async () => {
    const { store, calls } = fakeStore();
    const warnings: string[] = [];
    const learner = createSchemaLearner(store, {
      delayMs: 1,
      onDrift: () => {
        throw new Error("alerts down");
      },
      logger: { warn: (_o, msg) => void warnings.push(msg) },
    });
    learner.observe([obs(1)]);
    await learner.flush();
    learner.observe([obs(2)]);
    await learner.flush();
    expect(calls).toHaveLength(2);
    expect(warnings).toEqual(["schema drift not raised", "schema drift not raised"]);
  });
});
