import { afterEach, describe, expect, it } from "vitest";
import { createHash, randomUUID } from "node:crypto";
import path from "node:path";
import { create } from "@bufbuild/protobuf";
import { Code, createClient, createHandlerContext, createRouterTransport, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { CapturedDeliverySchema, CapturedEventSchema, CatalogService, decodeAppendedEvents, encodeCapturedEvents, GetEndpointRequestSchema, type CapturedEvent, type Endpoint, type Event } from "@whc/contracts";
// The service is tested over a real store (a test-only cycle, allowed in eslint.config.js).
import { openSqliteStore } from "@whc/catalog-sqlite";
import { AppError, fromConnectError } from "@whc/errors";
import { uuidV7Time } from "@whc/ids";
import { createLogger } from "@whc/logging";
import { serveH2c, serverInterceptor } from "@whc/rpc";
import { expectFailure, tempDir } from "@whc/testing";
import { createCatalogService } from "./service.js";

/*
 * The catalog service over the real embedded SQLite store, served by Connect's router
 * transport and called through a typed client, as ingest, the gateway and replay call it.
 */

const logger = createLogger("catalog-test", "silent");
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const UNKNOWN_ID = "01890000-0000-7000-8000-000000000000";
const hashOf = (text: string) => createHash("sha256").update(text).digest();
const token = (word: string) => createHash("sha256").update(`token:${word}`).digest().subarray(0, 8);

async function startCatalog(options: { endpointQuota?: number; keyQuota?: number } = {}) {
  const dir = tempDir("whc-catalog-service-");
  const store = openSqliteStore({ file: path.join(dir.path, "catalog.db") });
  cleanups.push(async () => {
    await store.close();
    dir.remove();
  });
  // A clock the tests move: creation times, commit stamps, readAt and revokedAt come from it.
  const clock = { now: 1_800_000_000_000 };
  const service = createCatalogService(store, { now: () => clock.now, ...options });
  const transport = createRouterTransport((router) => router.service(CatalogService, service), {
    router: { interceptors: [serverInterceptor(logger)] },
  });
  return { catalog: createClient(CatalogService, transport), service, store, clock };
}

type Catalog = Client<typeof CatalogService>;

async function account(catalog: Catalog, name = `acct-${randomUUID()}`) {
  const { key } = await catalog.ensureApiKey({ accountName: name, keyHash: hashOf(name), prefix: "whc_abcd" });
  return key!.accountId;
}

function endpointInit(accountId: string, extra: Partial<Omit<Endpoint, "$typeName">> = {}) {
  return {
    accountId,
    slug: `ep-${randomUUID().slice(0, 8)}`,
    displayName: "Orders",
    operatingMode: "capture",
    status: "active",
    replayFromDashboard: true,
    replayFromApi: true,
    provider: "generic",
    source: "api",
    ...extra,
  };
}

async function endpointOf(catalog: Catalog, accountId: string, extra: Partial<Omit<Endpoint, "$typeName">> = {}) {
  return (await catalog.createEndpoint({ endpoint: endpointInit(accountId, extra) })).endpoint!;
}

function eventInit(endpoint: Endpoint, extra: Partial<Omit<Event, "$typeName">> & { words?: string[] } = {}) {
  const { words = ["hello"], ...rest } = extra;
  return {
    accountId: endpoint.accountId,
    endpointId: endpoint.id,
    method: "POST",
    path: "/orders?x=1",
    headers: [
      { name: "Content-Type", value: "application/json" },
      { name: "X-Repeat", value: "one" },
      { name: "X-Repeat", value: "two" },
    ],
    remoteIp: "203.0.113.9",
    canonicalEventType: "invoice.paid",
    provider: "generic",
    verification: "unverified",
    responseCode: 200,
    originalSizeBytes: 5n,
    bodyStored: true,
    body: { ciphertext: new Uint8Array([1, 2, 3, 0, 255]), wrappedKey: new Uint8Array([9, 9]), keyId: "k1" },
    searchTokens: words.map(token),
    diagnosticJson: '{"bodyIs":"json"}',
    forwardedResponseJson: "{}",
    ...rest,
  };
}


describe("endpoints", () => {
  it("creates an endpoint with every field it was given, and reads it back", async () => {
    const { catalog, clock } = await startCatalog();
    const accountId = await account(catalog);

    const created = await endpointOf(catalog, accountId, {
      slug: "orders",
      displayName: "Orders in",
      operatingMode: "metadata_only",
      status: "paused",
      replayFromDashboard: false,
      replayFromApi: false,
      provider: "stripe",
      sealedSecret: new Uint8Array([7, 7, 7]),
      genericSignatureHeader: "X-Sig",
      genericSignaturePrefix: "sha256=",
      source: "cli",
    });

    expect(created.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(created).toMatchObject({
      accountId,
      slug: "orders",
      displayName: "Orders in",
      operatingMode: "metadata_only",
      status: "paused",
      replayFromDashboard: false,
      replayFromApi: false,
      provider: "stripe",
      secretSet: true,
      genericSignatureHeader: "X-Sig",
      genericSignaturePrefix: "sha256=",
      source: "cli",
      createdAtMs: BigInt(clock.now),
      updatedAtMs: BigInt(clock.now),
      eventCount: 0n,
      purgedEventCount: 0n,
    });
    // The sealed secret leaves the catalog only when asked for.
    expect(created.sealedSecret.length).toBe(0);
    const { endpoint: read } = await catalog.getEndpoint({ accountId, endpointId: created.id });
    expect(read).toEqual(created);
    const { endpoint: withSecret } = await catalog.getEndpoint({ accountId, endpointId: created.id, includeSealedSecret: true });
    expect([...withSecret!.sealedSecret]).toEqual([7, 7, 7]);
  });

  it("lists an account's endpoints and nobody else's", async () => {
    const { catalog } = await startCatalog();
    const a = await account(catalog);
    const b = await account(catalog);
    const a1 = await endpointOf(catalog, a);
    const a2 = await endpointOf(catalog, a);
    const b1 = await endpointOf(catalog, b);

    expect((await catalog.listEndpoints({ accountId: a })).endpoints.map((e) => e.id).sort()).toEqual([a1.id, a2.id].sort());
    expect((await catalog.listEndpoints({ accountId: b })).endpoints.map((e) => e.id)).toEqual([b1.id]);
    expect((await catalog.listEndpoints({ accountId: await account(catalog) })).endpoints).toEqual([]);
  });

  it("pages an account's endpoints by id, saying whether more follow; limit 0 lists them all", async () => {
    const { catalog } = await startCatalog();
    const accountId = await account(catalog);
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) ids.push((await endpointOf(catalog, accountId)).id);
    const first = await catalog.listEndpoints({ accountId, limit: 2 });
    expect({ ids: first.endpoints.map((e) => e.id), more: first.hasMore }).toEqual({ ids: ids.slice(0, 2), more: true });
    const second = await catalog.listEndpoints({ accountId, limit: 2, after: ids[1]!.toUpperCase() });
    expect({ ids: second.endpoints.map((e) => e.id), more: second.hasMore }).toEqual({ ids: ids.slice(2, 4), more: true });
    const last = await catalog.listEndpoints({ accountId, limit: 2, after: ids[3]! });
    expect({ ids: last.endpoints.map((e) => e.id), more: last.hasMore }).toEqual({ ids: ids.slice(4), more: false });
    const exact = await catalog.listEndpoints({ accountId, limit: 5 });
    expect(exact.hasMore).toBe(false);
    expect((await catalog.listEndpoints({ accountId })).endpoints.map((e) => e.id)).toEqual(ids);
    await expectFailure(catalog.listEndpoints({ accountId, limit: 2, after: "nope" }), Code.InvalidArgument, "validation_failed", {
      field: "after",
      fieldReason: "format",
    });
    await expectFailure(catalog.listEndpoints({ accountId, limit: -1 }), Code.InvalidArgument, "validation_failed", { field: "limit", fieldReason: "range" });
  });

  it("refuses a create past the endpoint quota with quota_exceeded, naming the quota and its limit", async () => {
    const { catalog } = await startCatalog({ endpointQuota: 2 });
    const accountId = await account(catalog);
    await endpointOf(catalog, accountId);
    await endpointOf(catalog, accountId);
    const err = await expectFailure(catalog.createEndpoint({ endpoint: endpointInit(accountId) }), Code.ResourceExhausted, "quota_exceeded");
    const { meta } = fromConnectError(err);
    expect({ quota: meta.quota, limit: String(meta.limit) }).toEqual({ quota: "endpoints", limit: "2" });
    expect((await endpointOf(catalog, await account(catalog))).id).toBeTruthy();
  });

  it("answers another account's endpoint exactly as an unknown one: not_found", async () => {
    const { catalog } = await startCatalog();
    const owner = await account(catalog);
    const stranger = await account(catalog);
    const endpoint = await endpointOf(catalog, owner);
    const eventId = (await catalog.appendEvents({ events: [eventInit(endpoint)] })).events[0]!.id;

    const calls: [string, (endpointId: string) => Promise<unknown>][] = [
      ["getEndpoint", (endpointId) => catalog.getEndpoint({ accountId: stranger, endpointId })],
      ["deleteEndpoint", (endpointId) => catalog.deleteEndpoint({ accountId: stranger, endpointId })],
      ["listEvents", (endpointId) => catalog.listEvents({ accountId: stranger, endpointId })],
      ["getEvent", (endpointId) => catalog.getEvent({ accountId: stranger, endpointId, eventId })],
      ["deleteEvent", (endpointId) => catalog.deleteEvent({ accountId: stranger, endpointId, eventId })],
    ];
    for (const [name, call] of calls) {
      const foreign = await expectFailure(call(endpoint.id), Code.NotFound, "not_found");
      const unknown = await expectFailure(call(UNKNOWN_ID), Code.NotFound, "not_found");
      expect({ name, message: foreign.rawMessage }).toEqual({ name, message: unknown.rawMessage });
    }

    // The stranger's attempts changed nothing for the owner.
    expect((await catalog.getEndpoint({ accountId: owner, endpointId: endpoint.id })).endpoint?.eventCount).toBe(1n);
    expect((await catalog.getEvent({ accountId: owner, endpointId: endpoint.id, eventId })).event?.id).toBe(eventId);
  });

  it("refuses a slug the account already has with slug_taken, and lets another account use it", async () => {
    const { catalog } = await startCatalog();
    const a = await account(catalog);
    const b = await account(catalog);
    await endpointOf(catalog, a, { slug: "billing" });

    await expectFailure(catalog.createEndpoint({ endpoint: endpointInit(a, { slug: "billing" }) }), Code.AlreadyExists, "slug_taken", {
      field: "slug",
      fieldReason: "",
    });
    expect((await endpointOf(catalog, b, { slug: "billing" })).slug).toBe("billing");
    expect((await catalog.listEndpoints({ accountId: a })).endpoints).toHaveLength(1);
  });

  it("deletes an endpoint with its events; a second delete is not_found", async () => {
    const { catalog } = await startCatalog();
    const accountId = await account(catalog);
    const endpoint = await endpointOf(catalog, accountId);
    const kept = await endpointOf(catalog, accountId);
    const { events } = await catalog.appendEvents({ events: [eventInit(endpoint), eventInit(kept)] });

    await catalog.deleteEndpoint({ accountId, endpointId: endpoint.id });

    await expectFailure(catalog.getEndpoint({ accountId, endpointId: endpoint.id }), Code.NotFound, "not_found");
    await expectFailure(catalog.getEvent({ accountId, endpointId: endpoint.id, eventId: events[0]!.id }), Code.NotFound, "not_found");
    await expectFailure(catalog.deleteEndpoint({ accountId, endpointId: endpoint.id }), Code.NotFound, "not_found");
    expect((await catalog.listEndpoints({ accountId })).endpoints.map((e) => e.id)).toEqual([kept.id]);
    expect((await catalog.getEvent({ accountId, endpointId: kept.id, eventId: events[1]!.id })).event?.id).toBe(events[1]!.id);
  });

  it("validates what it is given", async () => {
    const { catalog } = await startCatalog();
    const accountId = await account(catalog);
    const bad = (field: string, fieldReason: string) => ({ field, fieldReason });

    await expectFailure(catalog.createEndpoint({}), Code.InvalidArgument, "validation_failed", bad("endpoint", "required"));
    await expectFailure(catalog.createEndpoint({ endpoint: endpointInit("") }), Code.InvalidArgument, "validation_failed", bad("account_id", "required"));
    await expectFailure(catalog.getEndpoint({ accountId, endpointId: "nope" }), Code.InvalidArgument, "validation_failed", bad("endpoint_id", "format"));
    await expectFailure(catalog.deleteEndpoint({ accountId, endpointId: "nope" }), Code.InvalidArgument, "validation_failed", bad("endpoint_id", "format"));
    await expectFailure(
      catalog.getEvent({ accountId, endpointId: UNKNOWN_ID, eventId: "nope" }),
      Code.InvalidArgument,
      "validation_failed",
      bad("event_id", "format"),
    );
  });
});

describe("events", () => {
  it("appends a batch in order and gives each event its id and commit time", async () => {
    const { catalog, clock } = await startCatalog();
    const accountId = await account(catalog);
    const endpoint = await endpointOf(catalog, accountId);

    const { events: stamps } = await catalog.appendEvents({
      events: [eventInit(endpoint, { method: "PUT" }), eventInit(endpoint, { method: "PATCH" }), eventInit(endpoint, { method: "DELETE" })],
    });

    expect(stamps).toHaveLength(3);
    for (const s of stamps) {
      expect(s.endpointMissing).toBe(false);
      expect(s.receivedAtMs).toBe(BigInt(clock.now));
      expect(uuidV7Time(s.id)).toBe(clock.now);
    }
    expect([...stamps.map((s) => s.id)].sort()).toEqual(stamps.map((s) => s.id));
    const { endpoint: after } = await catalog.getEndpoint({ accountId, endpointId: endpoint.id });
    expect(after).toMatchObject({ eventCount: 3n, lastEventAtMs: BigInt(clock.now) });
  });

  it("stores every field of an event and gives it back whole, the list giving summaries", async () => {
    const { catalog } = await startCatalog();
    const accountId = await account(catalog);
    const endpoint = await endpointOf(catalog, accountId);
    const input = eventInit(endpoint, { method: "PUT", responseCode: 413, truncated: true, originalSizeBytes: 2_000_000n, verification: "failed", verificationFailureReason: "signature_mismatch" });
    const id = (await catalog.appendEvents({ events: [input] })).events[0]!.id;

    const { event } = await catalog.getEvent({ accountId, endpointId: endpoint.id, eventId: id });
    expect(event).toMatchObject({
      id,
      accountId,
      endpointId: endpoint.id,
      method: "PUT",
      path: "/orders?x=1",
      remoteIp: "203.0.113.9",
      canonicalEventType: "invoice.paid",
      provider: "generic",
      verification: "failed",
      verificationFailureReason: "signature_mismatch",
      responseCode: 413,
      truncated: true,
      originalSizeBytes: 2_000_000n,
      bodyStored: true,
      diagnosticJson: '{"bodyIs":"json"}',
      forwardedResponseJson: "{}",
    });
    expect(event!.headers.map((h) => [h.name, h.value])).toEqual([
      ["Content-Type", "application/json"],
      ["X-Repeat", "one"],
      ["X-Repeat", "two"],
    ]);
    expect([...event!.body!.ciphertext]).toEqual([1, 2, 3, 0, 255]);
    expect([...event!.body!.wrappedKey]).toEqual([9, 9]);
    expect(event!.body!.keyId).toBe("k1");
    expect(event!.readAtMs).toBeUndefined();

    const [summary] = (await catalog.listEvents({ accountId, endpointId: endpoint.id })).events;
    expect(summary).toMatchObject({ id, method: "PUT", responseCode: 413, truncated: true, bodyStored: true });
    expect(summary!.headers).toEqual([]);
    expect(summary!.body?.ciphertext.length ?? 0).toBe(0);
    expect(summary!.diagnosticJson).toBe("");
  });

  it("stores nothing for an endpoint deleted before the append, and says so for that event only", async () => {
    const { catalog } = await startCatalog();
    const accountId = await account(catalog);
    const gone = await endpointOf(catalog, accountId);
    const live = await endpointOf(catalog, accountId);
    await catalog.deleteEndpoint({ accountId, endpointId: gone.id });

    const { events } = await catalog.appendEvents({ events: [eventInit(gone), eventInit(live)] });

    expect(events.map((e) => e.endpointMissing)).toEqual([true, false]);
    expect(events[0]!.id).toBe("");
    expect((await catalog.listEvents({ accountId, endpointId: live.id })).events.map((e) => e.id)).toEqual([events[1]!.id]);
  });

  it("lists newest first and pages with before and after cursors", async () => {
    const { catalog, clock } = await startCatalog();
    const accountId = await account(catalog);
    const endpoint = await endpointOf(catalog, accountId);
    const ids: string[] = [];
    for (let i = 0; i < 7; i += 1) {
      clock.now += 1000;
      // Two per commit: equal receivedAt, told apart by id.
      const { events } = await catalog.appendEvents({ events: [eventInit(endpoint), eventInit(endpoint)] });
      ids.push(...events.map((e) => e.id));
    }
    const newestFirst = [...ids].reverse();
    const list = (extra: Record<string, unknown> = {}) => catalog.listEvents({ accountId, endpointId: endpoint.id, ...extra });
    const cursor = (e: Event) => ({ receivedAtMs: e.receivedAtMs, id: e.id });

    const all = await list();
    expect(all.events.map((e) => e.id)).toEqual(newestFirst);
    expect(all.hasOlder).toBe(false);

    const seen: string[] = [];
    let page = await list({ limit: 5 });
    seen.push(...page.events.map((e) => e.id));
    // Bounded, so that a cursor that is not honoured fails the test instead of looping.
    for (let pages = 1; page.hasOlder && pages < 10; pages += 1) {
      page = await list({ limit: 5, before: cursor(page.events[page.events.length - 1]!) });
      seen.push(...page.events.map((e) => e.id));
    }
    expect(seen).toEqual(newestFirst);

    // after: the `limit` events just newer than the cursor, still newest first.
    const pivot = all.events[9]!; // ids[4]
    const after = await list({ limit: 3, after: cursor(pivot) });
    expect(after.events.map((e) => e.id)).toEqual([ids[7], ids[6], ids[5]]);
    expect((await list({ after: cursor(all.events[0]!) })).events).toEqual([]);
    // A cursor between two events of the same millisecond.
    expect((await list({ limit: 1, before: cursor(all.events[0]!) })).events.map((e) => e.id)).toEqual([ids[12]]);
  });

  it("applies each filter, and all of them together", async () => {
    const { catalog, clock } = await startCatalog();
    const accountId = await account(catalog);
    const endpoint = await endpointOf(catalog, accountId);
    const append = async (extra: Partial<Omit<Event, "$typeName">>) => {
      clock.now += 1000;
      const { events } = await catalog.appendEvents({ events: [eventInit(endpoint, extra)] });
      return { id: events[0]!.id, at: events[0]!.receivedAtMs };
    };
    const a = await append({ canonicalEventType: "a", provider: "stripe", responseCode: 200, verification: "verified" });
    const b = await append({ canonicalEventType: "b", provider: "github", responseCode: 413, verification: "failed" });
    const c = await append({ canonicalEventType: "a", provider: "github", responseCode: 200, verification: "unverified" });
    const ids = async (extra: Record<string, unknown>) =>
      (await catalog.listEvents({ accountId, endpointId: endpoint.id, ...extra })).events.map((e) => e.id);

    expect(await ids({ eventType: "a" })).toEqual([c.id, a.id]);
    expect(await ids({ provider: "github" })).toEqual([c.id, b.id]);
    expect(await ids({ responseCode: 413 })).toEqual([b.id]);
    expect(await ids({ verification: "verified" })).toEqual([a.id]);
    expect(await ids({ fromMs: b.at })).toEqual([c.id, b.id]);
    expect(await ids({ toMs: b.at })).toEqual([a.id]);
    expect(await ids({ fromMs: a.at, toMs: c.at, provider: "github", eventType: "b", responseCode: 413, verification: "failed" })).toEqual([b.id]);
    expect(await ids({ eventType: "a", provider: "stripe", verification: "failed" })).toEqual([]);
  });

  it("searches by blind-index tokens, every word required, leaving out and counting metadata-only events", async () => {
    const { catalog } = await startCatalog();
    const accountId = await account(catalog);
    const endpoint = await endpointOf(catalog, accountId);
    const { events } = await catalog.appendEvents({
      events: [
        eventInit(endpoint, { words: ["red", "apple"] }),
        eventInit(endpoint, { words: ["blue", "apple"] }),
        eventInit(endpoint, { words: [], bodyStored: false, body: undefined }),
      ],
    });
    const [red, blue] = events.map((e) => e.id);
    const search = (words: string[]) => catalog.listEvents({ accountId, endpointId: endpoint.id, search: true, searchTokens: words.map(token) });

    expect((await search(["apple"])).events.map((e) => e.id)).toEqual([blue, red]);
    expect((await search(["red", "apple"])).events.map((e) => e.id)).toEqual([red]);
    expect((await search(["green"])).events).toEqual([]);
    expect((await search(["apple"])).searchExcludedMetadataOnlyCount).toBe(1);
    // Without `search`, tokens are not a filter and nothing is left out.
    expect((await catalog.listEvents({ accountId, endpointId: endpoint.id, searchTokens: [token("red")] })).events).toHaveLength(3);
  });

  it("stores captures sent in the lean append form like events, after any events of the same request, refuses malformed tokens, and answers encoded when asked", async () => {
    const { catalog } = await startCatalog();
    const accountId = await account(catalog);
    const endpoint = await endpointOf(catalog, accountId, { operatingMode: "relay" });
    const capture = (extra: Partial<Omit<CapturedEvent, "$typeName">> = {}) => ({
      accountId,
      endpointId: endpoint.id,
      method: "POST",
      remoteIp: "203.0.113.9",
      canonicalEventType: "invoice.paid",
      provider: "generic",
      verification: "unverified",
      responseCode: 202,
      originalSizeBytes: 5n,
      wrappedKey: new Uint8Array([9, 9]),
      keyId: "k1",
      sealedRequest: new Uint8Array([7, 7, 7]),
      body: new Uint8Array([1, 2, 3, 0, 255]),
      searchTokens: Buffer.concat([token("red"), token("pear")]),
      diagnosticJson: '{"bodyIs":"json"}',
      ...extra,
    });
    const { events } = await catalog.appendEvents({
      events: [eventInit(endpoint, { words: ["red"] })],
      captures: [capture({ forwardTarget: "https://example.com/in", forwardScheduled: true }), capture({ body: undefined, searchTokens: new Uint8Array(0) })],
    });
    const [fromEvent, withBody, metadataOnly] = events.map((e) => e.id);
    expect(events.map((e) => e.responseCode)).toEqual([200, 202, 202]);

    const { event } = await catalog.getEvent({ accountId, endpointId: endpoint.id, eventId: withBody! });
    expect(event).toMatchObject({ method: "POST", responseCode: 202, bodyStored: true, path: "", headers: [], diagnosticJson: '{"bodyIs":"json"}' });
    expect([...event!.body!.ciphertext]).toEqual([1, 2, 3, 0, 255]);
    expect([...event!.sealedRequest!.ciphertext]).toEqual([7, 7, 7]);
    expect([...event!.sealedRequest!.wrappedKey]).toEqual([9, 9]);
    // One target alone (an ingest from before destinations): the endpoint's one destination, whose id is the endpoint's.
    expect(event!.forward).toMatchObject({ state: "pending", target: "https://example.com/in" });
    expect(event!.deliveries.map((d) => [d.destinationId, d.state, d.target])).toEqual([[endpoint.id, "pending", "https://example.com/in"]]);
    expect((await catalog.getOutboxStats({})).pending).toBe(1n);
    const { event: bare } = await catalog.getEvent({ accountId, endpointId: endpoint.id, eventId: metadataOnly! });
    expect(bare!.bodyStored).toBe(false);
    expect(bare!.body).toBeUndefined();
    expect([...bare!.sealedRequest!.ciphertext]).toEqual([7, 7, 7]);

    const search = (words: string[]) => catalog.listEvents({ accountId, endpointId: endpoint.id, search: true, searchTokens: words.map(token) });
    expect((await search(["red"])).events.map((e) => e.id)).toEqual([withBody, fromEvent]);
    expect((await search(["pear"])).events.map((e) => e.id)).toEqual([withBody]);
    expect((await search(["pear"])).searchExcludedMetadataOnlyCount).toBe(1);

    const refused = (extra: Partial<Omit<CapturedEvent, "$typeName">>, field: string, fieldReason: string) =>
      expectFailure(catalog.appendEvents({ captures: [capture(extra)] }), Code.InvalidArgument, "validation_failed", { field, fieldReason });
    await refused({ searchTokens: new Uint8Array(12) }, "search_tokens", "format");
    await refused({ forwardScheduled: true }, "deliveries", "required");
    const delivery = (destinationId: string, target: string) => create(CapturedDeliverySchema, { destinationId, target });
    await refused({ forwardScheduled: true, deliveries: [delivery("not-a-uuid", "t")] }, "deliveries.0.destination_id", "format");
    await refused({ forwardScheduled: true, deliveries: [delivery(endpoint.id, "")] }, "deliveries.0.target", "required");
    await refused({ forwardScheduled: true, deliveries: [delivery(endpoint.id, "t"), delivery(endpoint.id, "u")] }, "deliveries", "format");
    await refused({ wrappedKey: new Uint8Array(0) }, "wrapped_key", "required");
    expect((await catalog.listEvents({ accountId, endpointId: endpoint.id })).events).toHaveLength(3);

    // The same captures encoded in one field (what ingest sends to a catalog in another
    // process): answered after the request's `captures`, stored the same, checked the same.
    const encoded = (...captures: ReturnType<typeof capture>[]) => encodeCapturedEvents(captures.map((c) => create(CapturedEventSchema, c)));
    const mixed = await catalog.appendEvents({
      captures: [capture({ canonicalEventType: "as.message" })],
      encodedCaptures: encoded(capture({ canonicalEventType: "as.bytes", forwardTarget: "https://example.com/in", forwardScheduled: true }), capture({ body: undefined, searchTokens: new Uint8Array(0) })),
    });
    expect(mixed.events).toHaveLength(3);
    const [asMessage, asBytes, asBytesBare] = mixed.events.map((e) => e.id);
    expect((await catalog.getEvent({ accountId, endpointId: endpoint.id, eventId: asMessage! })).event!.canonicalEventType).toBe("as.message");
    const { event: decoded } = await catalog.getEvent({ accountId, endpointId: endpoint.id, eventId: asBytes! });
    expect(decoded).toMatchObject({ canonicalEventType: "as.bytes", method: "POST", remoteIp: "203.0.113.9", responseCode: 202, bodyStored: true, diagnosticJson: '{"bodyIs":"json"}' });
    expect([...decoded!.body!.ciphertext]).toEqual([1, 2, 3, 0, 255]);
    expect([...decoded!.sealedRequest!.wrappedKey]).toEqual([9, 9]);
    expect(decoded!.forward).toMatchObject({ state: "pending", target: "https://example.com/in" });
    expect((await catalog.getEvent({ accountId, endpointId: endpoint.id, eventId: asBytesBare! })).event!.bodyStored).toBe(false);
    expect((await search(["pear"])).events.map((e) => e.id)).toEqual([asBytes, asMessage, withBody]);

    const refusedEncoded = (bytes: Uint8Array, field: string, fieldReason: string) =>
      expectFailure(catalog.appendEvents({ encodedCaptures: bytes }), Code.InvalidArgument, "validation_failed", { field, fieldReason });
    await refusedEncoded(encoded(capture()).subarray(0, 40), "encoded_captures", "format");
    await refusedEncoded(new Uint8Array([0x0a, 0x05, 0x08]), "encoded_captures", "format");
    await refusedEncoded(encoded(capture(), capture({ searchTokens: new Uint8Array(12) })), "search_tokens", "format");
    expect((await catalog.listEvents({ accountId, endpointId: endpoint.id })).events).toHaveLength(6);

    // Asked for it (a remote ingest), the answer comes encoded in one field too, and says the same.
    const gone = capture({ endpointId: UNKNOWN_ID });
    const answered = await catalog.appendEvents({ encodedCaptures: encoded(capture({ responseCode: 201 }), gone), encodeAnswer: true });
    expect(answered.events).toEqual([]);
    const [stored, missing] = decodeAppendedEvents(answered.encodedEvents);
    const [newest] = (await catalog.listEvents({ accountId, endpointId: endpoint.id })).events;
    expect(stored).toEqual({ id: newest!.id, receivedAtMs: Number(newest!.receivedAtMs), endpointMissing: false, sequenceIndex: 0, responseCode: 201, duplicateOf: "" });
    expect(missing).toMatchObject({ id: "", endpointMissing: true });
    const asMessages = await catalog.appendEvents({ encodedCaptures: encoded(capture({ responseCode: 201 }), gone) });
    expect(asMessages.encodedEvents).toHaveLength(0);
    expect(asMessages.events.map((e) => [e.responseCode, e.endpointMissing])).toEqual([[201, false], [0, true]]);
  });

  it("refuses a cursor whose id is not a UUID", async () => {
    const { catalog } = await startCatalog();
    const accountId = await account(catalog);
    const endpoint = await endpointOf(catalog, accountId);

    await expectFailure(
      catalog.listEvents({ accountId, endpointId: endpoint.id, before: { receivedAtMs: 1n, id: "x" } }),
      Code.InvalidArgument,
      "validation_failed",
      { field: "beforeId", fieldReason: "format" },
    );
    await expectFailure(
      catalog.listEvents({ accountId, endpointId: endpoint.id, after: { receivedAtMs: 1n, id: "x" } }),
      Code.InvalidArgument,
      "validation_failed",
      { field: "afterId", fieldReason: "format" },
    );
  });

  it("sets readAt on the first read that marks it, and keeps it", async () => {
    const { catalog, clock } = await startCatalog();
    const accountId = await account(catalog);
    const endpoint = await endpointOf(catalog, accountId);
    const eventId = (await catalog.appendEvents({ events: [eventInit(endpoint)] })).events[0]!.id;
    const read = (markRead: boolean) => catalog.getEvent({ accountId, endpointId: endpoint.id, eventId, markRead });

    expect((await read(false)).event?.readAtMs).toBeUndefined();
    clock.now += 5000;
    const firstRead = clock.now;
    expect((await read(true)).event?.readAtMs).toBe(BigInt(firstRead));
    clock.now += 5000;
    expect((await read(true)).event?.readAtMs).toBe(BigInt(firstRead));
    expect((await catalog.listEvents({ accountId, endpointId: endpoint.id })).events[0]?.readAtMs).toBe(BigInt(firstRead));
  });

  it("deletes an event idempotently: the second delete succeeds and says nothing was deleted", async () => {
    const { catalog } = await startCatalog();
    const accountId = await account(catalog);
    const endpoint = await endpointOf(catalog, accountId);
    const { events } = await catalog.appendEvents({ events: [eventInit(endpoint), eventInit(endpoint)] });
    const [gone, kept] = events.map((e) => e.id) as [string, string];

    expect((await catalog.deleteEvent({ accountId, endpointId: endpoint.id, eventId: gone })).deleted).toBe(true);
    expect((await catalog.deleteEvent({ accountId, endpointId: endpoint.id, eventId: gone })).deleted).toBe(false);
    expect((await catalog.deleteEvent({ accountId, endpointId: endpoint.id, eventId: UNKNOWN_ID })).deleted).toBe(false);

    expect((await catalog.listEvents({ accountId, endpointId: endpoint.id })).events.map((e) => e.id)).toEqual([kept]);
    await expectFailure(catalog.getEvent({ accountId, endpointId: endpoint.id, eventId: gone }), Code.NotFound, "not_found");
    expect((await catalog.getEndpoint({ accountId, endpointId: endpoint.id })).endpoint?.eventCount).toBe(1n);
  });

  it("purges events received before a time and records it on the endpoint", async () => {
    const { catalog, clock } = await startCatalog();
    const accountId = await account(catalog);
    const endpoint = await endpointOf(catalog, accountId);
    const { events: old } = await catalog.appendEvents({ events: [eventInit(endpoint), eventInit(endpoint)] });
    clock.now += 60_000;
    const { events: recent } = await catalog.appendEvents({ events: [eventInit(endpoint)] });

    const { purged } = await catalog.purgeEvents({ receivedBeforeMs: old[0]!.receivedAtMs + 1n });

    expect(purged).toBe(2n);
    expect((await catalog.listEvents({ accountId, endpointId: endpoint.id })).events.map((e) => e.id)).toEqual([recent[0]!.id]);
    expect((await catalog.getEndpoint({ accountId, endpointId: endpoint.id })).endpoint).toMatchObject({
      eventCount: 1n,
      purgedEventCount: 2n,
      lastPurgedAtMs: BigInt(clock.now),
    });
  });
});

describe("api keys", () => {
  it("registers a key once, and puts a second key of the same account name in the same account", async () => {
    const { catalog, clock } = await startCatalog();

    const first = await catalog.ensureApiKey({ accountName: "acme", keyHash: hashOf("k1"), prefix: "whc_k1" });
    const again = await catalog.ensureApiKey({ accountName: "acme", keyHash: hashOf("k1"), prefix: "whc_k1" });
    clock.now += 1000;
    const second = await catalog.ensureApiKey({ accountName: "acme", keyHash: hashOf("k2"), prefix: "whc_k2" });

    expect(first.created).toBe(true);
    expect(first.key).toMatchObject({ accountName: "acme", prefix: "whc_k1", createdAtMs: BigInt(clock.now - 1000) });
    expect(first.key!.revokedAtMs).toBeUndefined();
    expect(again.created).toBe(false);
    expect(again.key!.id).toBe(first.key!.id);
    expect(second.created).toBe(true);
    expect(second.key!.accountId).toBe(first.key!.accountId);
    expect((await catalog.listApiKeys({ accountName: "acme" })).keys.map((k) => k.id)).toEqual([first.key!.id, second.key!.id]);
    expect((await catalog.countApiKeys({})).active).toBe(2n);
  });

  it("refuses to move a key to another account with conflict", async () => {
    const { catalog } = await startCatalog();
    await catalog.ensureApiKey({ accountName: "acme", keyHash: hashOf("k1"), prefix: "p" });

    await expectFailure(catalog.ensureApiKey({ accountName: "other", keyHash: hashOf("k1"), prefix: "p" }), Code.Aborted, "conflict");
    expect((await catalog.listApiKeys({ accountName: "other" })).keys).toEqual([]);
  });

  it("looks a key up by its hash, and answers unauthorized for an unknown, malformed or revoked one", async () => {
    const { catalog, clock } = await startCatalog();
    const { key } = await catalog.ensureApiKey({ accountName: "acme", keyHash: hashOf("k1"), prefix: "p" });
    await catalog.ensureApiKey({ accountName: "acme", keyHash: hashOf("k2"), prefix: "p" });

    expect(await catalog.authenticateApiKey({ keyHash: hashOf("k1") })).toMatchObject({ accountId: key!.accountId, keyId: key!.id });
    await expectFailure(catalog.authenticateApiKey({ keyHash: hashOf("unknown") }), Code.Unauthenticated, "unauthorized");
    await expectFailure(catalog.authenticateApiKey({ keyHash: hashOf("k1").subarray(0, 16) }), Code.Unauthenticated, "unauthorized");

    clock.now += 1000;
    const { key: revoked } = await catalog.revokeApiKey({ keyId: key!.id });
    expect(revoked).toMatchObject({ id: key!.id, revokedAtMs: BigInt(clock.now) });
    await expectFailure(catalog.authenticateApiKey({ keyHash: hashOf("k1") }), Code.Unauthenticated, "unauthorized");
    expect((await catalog.authenticateApiKey({ keyHash: hashOf("k2") })).accountId).toBe(key!.accountId);
    expect((await catalog.countApiKeys({})).active).toBe(1n);
    const listed = (await catalog.listApiKeys({ accountName: "acme" })).keys.find((k) => k.id === key!.id);
    expect(listed?.revokedAtMs).toBe(BigInt(clock.now));
  });

  it("answers a key's scopes and endpoints, refuses it once expired, and writes its last use once a minute", async () => {
    const { catalog, clock } = await startCatalog();
    const accountId = await account(catalog, "acme");
    const endpointId = "01890000-0000-7000-8000-0000000000e1";
    const { key } = await catalog.createApiKey({
      accountId,
      name: "ci",
      keyHash: hashOf("ci"),
      prefix: "whc_ci",
      scopes: ["events:read", "events:read"],
      endpointIds: [endpointId.toUpperCase()],
      expiresAtMs: BigInt(clock.now + 120_000),
    });
    expect(key).toMatchObject({ name: "ci", scopes: ["events:read"], endpointIds: [endpointId], accountName: "acme" });
    expect(await catalog.authenticateApiKey({ keyHash: hashOf("ci") })).toMatchObject({ keyId: key!.id, prefix: "whc_ci", scopes: ["events:read"], endpointIds: [endpointId] });
    const lastUsed = async () => (await catalog.listApiKeys({ accountId })).keys.find((k) => k.id === key!.id)!.lastUsedAtMs;
    const firstUse = clock.now;
    expect(await lastUsed()).toBe(BigInt(firstUse));
    clock.now += 59_999;
    await catalog.authenticateApiKey({ keyHash: hashOf("ci") });
    expect(await lastUsed()).toBe(BigInt(firstUse));
    clock.now += 1;
    await catalog.authenticateApiKey({ keyHash: hashOf("ci") });
    expect(await lastUsed()).toBe(BigInt(clock.now));
    clock.now = firstUse + 120_000;
    await expectFailure(catalog.authenticateApiKey({ keyHash: hashOf("ci") }), Code.Unauthenticated, "unauthorized");

    await expectFailure(catalog.createApiKey({ accountId, name: "x", keyHash: hashOf("x"), prefix: "p", scopes: ["nope"] }), Code.InvalidArgument, "validation_failed", {
      field: "scopes.0",
      fieldReason: "format",
    });
    await expectFailure(catalog.createApiKey({ accountId, name: "x", keyHash: hashOf("x"), prefix: "p", scopes: [] }), Code.InvalidArgument, "validation_failed", {
      field: "scopes",
      fieldReason: "required",
    });
    // Revoking within another account is as unknown as an unknown key.
    const other = await account(catalog, "other");
    await expectFailure(catalog.revokeApiKey({ keyId: key!.id, accountId: other }), Code.NotFound, "not_found");
  });

  it("refuses a key past the account's usable keys with quota_exceeded (keys), and purges keys dead before the cutoff (ADR 0054)", async () => {
    const { catalog, clock } = await startCatalog({ keyQuota: 2 });
    const accountId = await account(catalog, "acme");
    const make = (name: string, expiresAtMs?: bigint) => catalog.createApiKey({ accountId, name, keyHash: hashOf(name), prefix: "whc_k", scopes: ["events:read"], ...(expiresAtMs ? { expiresAtMs } : {}) });
    const { key: ci } = await make("ci");
    const err = await expectFailure(make("one too many"), Code.ResourceExhausted, "quota_exceeded");
    const { meta } = fromConnectError(err);
    expect({ quota: meta.quota, limit: String(meta.limit) }).toEqual({ quota: "keys", limit: "2" });
    // The account's first key and bootstrap keys are never refused.
    expect((await catalog.ensureApiKey({ accountName: "acme", keyHash: hashOf("boot"), prefix: "whc_b" })).created).toBe(true);
    await catalog.revokeApiKey({ keyId: ci!.id, accountId });
    await expectFailure(make("still full"), Code.ResourceExhausted, "quota_exceeded");
    await catalog.revokeApiKey({ keyId: (await catalog.listApiKeys({ accountId })).keys.find((k) => k.name === "" && k.prefix !== "whc_b")!.id, accountId });
    const { key: session } = await make("session", BigInt(clock.now + 3_600_000));

    const day = 86_400_000;
    clock.now += 30 * day;
    // Revoked 30 days ago, to the millisecond: not yet before the cutoff.
    expect((await catalog.purgeApiKeys({ beforeMs: BigInt(clock.now - 30 * day) })).purged).toBe(0n);
    expect((await catalog.purgeApiKeys({ beforeMs: BigInt(clock.now - 30 * day + 1) })).purged).toBe(2n);
    expect((await catalog.listApiKeys({ accountId })).keys.map((k) => k.id)).toContain(session!.id);
    await expectFailure(catalog.authenticateApiKey({ keyHash: hashOf("ci") }), Code.Unauthenticated, "unauthorized");
    expect((await catalog.purgeApiKeys({ beforeMs: BigInt(clock.now) })).purged).toBe(1n);
    // Only the key never revoked and never expiring is left: the second ensured one.
    expect((await catalog.listApiKeys({ accountId })).keys.map((k) => k.prefix)).toEqual(["whc_b"]);
  });

  it("answers not_found when revoking an unknown key, and validates what ensureApiKey is given", async () => {
    const { catalog } = await startCatalog();

    await expectFailure(catalog.revokeApiKey({ keyId: UNKNOWN_ID }), Code.NotFound, "not_found");
    await expectFailure(catalog.ensureApiKey({ accountName: "", keyHash: hashOf("k"), prefix: "p" }), Code.InvalidArgument, "validation_failed", {
      field: "account_name",
      fieldReason: "required",
    });
    await expectFailure(
      catalog.ensureApiKey({ accountName: "acme", keyHash: new Uint8Array(31), prefix: "p" }),
      Code.InvalidArgument,
      "validation_failed",
      { field: "key_hash", fieldReason: "length" },
    );
    expect((await catalog.countApiKeys({})).active).toBe(0n);
  });
});

describe("replay allowance and audit", () => {
  it("charges one unit at a time up to the limit, per account and per day", async () => {
    const { catalog } = await startCatalog();
    const a = await account(catalog);
    const b = await account(catalog);
    const charge = (accountId: string, day = "2026-11-23") => catalog.chargeReplay({ accountId, day, limit: 2 });

    expect(await charge(a)).toMatchObject({ allowed: true, used: 1, remaining: 1 });
    expect(await charge(a)).toMatchObject({ allowed: true, used: 2, remaining: 0 });
    expect(await charge(a)).toMatchObject({ allowed: false, remaining: 0 });
    // A limit lowered during the day: more already used than now allowed, never a negative remainder.
    expect(await catalog.chargeReplay({ accountId: a, day: "2026-11-23", limit: 1 })).toMatchObject({ allowed: false, remaining: 0 });
    expect((await catalog.getReplayUsage({ accountId: a, day: "2026-11-23" })).used).toBe(2);
    expect(await charge(b)).toMatchObject({ allowed: true, used: 1, remaining: 1 });
    expect(await charge(a, "2026-11-24")).toMatchObject({ allowed: true, used: 1 });
    await expectFailure(catalog.chargeReplay({ accountId: a, day: "23/11/2026", limit: 2 }), Code.InvalidArgument, "validation_failed", {
      field: "day",
      fieldReason: "format",
    });
    await expectFailure(catalog.getReplayUsage({ accountId: a, day: "today" }), Code.InvalidArgument, "validation_failed", {
      field: "day",
      fieldReason: "format",
    });
  });

  it("records a replay audit entry and answers its id", async () => {
    const { catalog } = await startCatalog();
    const audit = { accountId: "acct", endpointId: UNKNOWN_ID, eventId: UNKNOWN_ID, targetUrl: "https://example.com/", mode: "exact", result: "delivered" };

    const given = await catalog.recordReplayAudit({ audit: { ...audit, id: "01890000-0000-7000-8000-0000000000aa" } });
    const assigned = await catalog.recordReplayAudit({ audit });

    expect(given.id).toBe("01890000-0000-7000-8000-0000000000aa");
    expect(assigned.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    await expectFailure(catalog.recordReplayAudit({}), Code.InvalidArgument, "validation_failed", { field: "audit", fieldReason: "required" });
  });
});

describe("served on a real HTTP/2 server on port 0", () => {
  it("answers over gRPC, errors carrying their reason", async () => {
    const { service } = await startCatalog();
    const server = await serveH2c({ routes: (r) => r.service(CatalogService, service), port: 0, host: "127.0.0.1", logger, credentials: undefined });
    cleanups.push(() => server.close());
    const catalog = createClient(CatalogService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${server.port}` }));
    const accountId = await account(catalog);

    const endpoint = await endpointOf(catalog, accountId, { slug: "wire" });
    const { events } = await catalog.appendEvents({ events: [eventInit(endpoint)] });

    expect((await catalog.getEvent({ accountId, endpointId: endpoint.id, eventId: events[0]!.id })).event?.headers).toHaveLength(3);
    await expectFailure(catalog.createEndpoint({ endpoint: endpointInit(accountId, { slug: "wire" }) }), Code.AlreadyExists, "slug_taken");
    await expectFailure(catalog.getEndpoint({ accountId: await account(catalog), endpointId: endpoint.id }), Code.NotFound, "not_found");
  });
});

describe("called directly", () => {
  const context = () =>
    createHandlerContext({
      service: CatalogService,
      method: CatalogService.method.getEndpoint,
      protocolName: "direct",
      requestMethod: "POST",
      url: "direct://catalog",
    });

  it("answers the message, and throws the domain error for an unknown id", async () => {
    const { catalog, service } = await startCatalog();
    const accountId = await account(catalog);
    const endpoint = await endpointOf(catalog, accountId, { slug: "direct" });

    const res = await service.getEndpoint(create(GetEndpointRequestSchema, { accountId, endpointId: endpoint.id }), context());
    expect(res.endpoint).toMatchObject({ id: endpoint.id, slug: "direct" });

    const err = await Promise.resolve(service.getEndpoint(create(GetEndpointRequestSchema, { accountId, endpointId: UNKNOWN_ID }), context())).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(AppError.is(err)).toBe(true);
    expect((err as AppError).reason).toBe("not_found");
  });
});
