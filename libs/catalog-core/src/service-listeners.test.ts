import { afterEach, describe, expect, it } from "vitest";
import { createHash, randomUUID } from "node:crypto";
import path from "node:path";
import { Code, ConnectError, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import { CatalogService, ErrorDetailSchema } from "@whc/contracts";
// The service is tested over a real store (a test-only cycle, allowed in eslint.config.js).
import { openSqliteStore } from "@whc/catalog-sqlite";
import { createLogger } from "@whc/logging";
import { serverInterceptor } from "@whc/rpc";
import { tempDir } from "@whc/testing";
import { createCatalogService } from "./service.js";

/*
 * Listener liveness through the catalog service (design §19): heartbeats on the service's
 * clock, the lag counted after the listener's cursor, the expiry, listener.stalled, the limit
 * per endpoint and another account's endpoint.
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const T0 = 1_800_000_000_000;

async function startCatalog() {
  const dir = tempDir("whc-catalog-listeners-");
  const store = openSqliteStore({ file: path.join(dir.path, "catalog.db") });
  cleanups.push(async () => {
    await store.close();
    dir.remove();
  });
  const clock = { now: T0 };
  const service = createCatalogService(store, { now: () => clock.now, listeners: { ttlMs: 30_000, stallMs: 120_000, perEndpoint: 2 } });
  const transport = createRouterTransport((router) => router.service(CatalogService, service), {
    router: { interceptors: [serverInterceptor(createLogger("catalog-test", "silent"))] },
  });
  return { catalog: createClient(CatalogService, transport), clock };
}

type Catalog = Client<typeof CatalogService>;

async function accountWithEndpoint(catalog: Catalog) {
  const name = `acct-${randomUUID()}`;
  const { key } = await catalog.ensureApiKey({ accountName: name, keyHash: createHash("sha256").update(name).digest(), prefix: "whc_t" });
  const accountId = key!.accountId;
  const { endpoint } = await catalog.createEndpoint({
    endpoint: { accountId, slug: `ep-${randomUUID().slice(0, 8)}`, displayName: "Listened", operatingMode: "capture", status: "active", provider: "generic", source: "api" },
  });
  return { accountId, endpointId: endpoint!.id };
}

async function capture(catalog: Catalog, accountId: string, endpointId: string, count = 1) {
  const { events } = await catalog.appendEvents({ events: Array.from({ length: count }, () => ({ accountId, endpointId, method: "POST", responseCode: 200 })) });
  return events.map((e) => ({ cursorAtMs: e.receivedAtMs!, cursorId: e.id }));
}

async function failure(call: Promise<unknown>) {
  const err = await call.then(
    () => expect.unreachable("the call succeeded"),
    (e: unknown) => ConnectError.from(e),
  );
  const [detail] = err.findDetails(ErrorDetailSchema);
  return { code: Code[err.code], reason: detail?.reason, field: detail?.field, fieldReason: detail?.fieldReason, quota: err.metadata.get("whc-meta-quota") };
}

describe("listeners over RPC", () => {
  it("registers, counts the lag after the cursor at each heartbeat, and forgets a listener 30 s after its last", async () => {
    const { catalog, clock } = await startCatalog();
    const { accountId, endpointId } = await accountWithEndpoint(catalog);
    const [first, , third] = await capture(catalog, accountId, endpointId, 3);
    const id = randomUUID();
    const beat = (cursor: { cursorAtMs: bigint; cursorId: string } | undefined, lastError = "") =>
      catalog.putListener({ accountId, listener: { id, endpointId, host: "laptop", startedAtMs: BigInt(T0), lastError, ...cursor } });

    expect((await beat(undefined)).listener).toMatchObject({ id, host: "laptop", lastSeenAtMs: BigInt(T0), lagEvents: 0, cursorId: "", stalled: false });
    clock.now += 10_000;
    expect((await beat(first, "connection_refused")).listener).toMatchObject({ lagEvents: 2, lastError: "connection_refused", cursorAtMs: first!.cursorAtMs });
    clock.now += 10_000;
    await beat(third);
    const { listeners } = await catalog.listListeners({ accountId, endpointId });
    expect(listeners).toHaveLength(1);
    expect(listeners[0]).toMatchObject({ id, lagEvents: 0, lastError: "", lastSeenAtMs: BigInt(T0 + 20_000), startedAtMs: BigInt(T0) });

    clock.now += 29_999;
    expect((await catalog.listListeners({ accountId, endpointId })).listeners).toHaveLength(1);
    clock.now += 1;
    expect((await catalog.listListeners({ accountId, endpointId })).listeners).toEqual([]);
  });

  it("is stalled once behind for 2 minutes without its lag ever falling, whether new captures arrive or not; never once caught up", async () => {
    const { catalog, clock } = await startCatalog();
    const { accountId, endpointId } = await accountWithEndpoint(catalog);
    const [stuckAt] = await capture(catalog, accountId, endpointId);
    const id = randomUUID();
    const beat = async (cursor = stuckAt) =>
      (await catalog.putListener({ accountId, listener: { id, endpointId, host: "laptop", startedAtMs: BigInt(T0), ...cursor } })).listener!;
    // Stuck on one event while new ones keep coming: the lag grows at every heartbeat.
    const seen = [];
    for (let beats = 0; beats <= 12; beats += 1) {
      seen.push((await beat()).stalled);
      await capture(catalog, accountId, endpointId);
      clock.now += 10_000;
    }
    expect(seen.slice(0, 12).every((s) => !s)).toBe(true);
    expect(seen[12]).toBe(true);
    expect((await catalog.listListeners({ accountId, endpointId })).listeners[0]).toMatchObject({ stalled: true, lagEvents: 12 });

    // It moves on: the lag falls, the run starts again.
    const latest = (await catalog.listEvents({ accountId, endpointId, limit: 1 })).events[0]!;
    const caughtUp = { cursorAtMs: latest.receivedAtMs, cursorId: latest.id };
    expect(await beat(caughtUp)).toMatchObject({ stalled: false, lagEvents: 0 });
    // Caught up, it is never stalled however long it waits.
    for (let beats = 0; beats < 15; beats += 1) {
      clock.now += 10_000;
      expect((await beat(caughtUp)).stalled).toBe(false);
    }
    // Stuck behind one event with nothing new arriving: stalled after 2 minutes too.
    await capture(catalog, accountId, endpointId);
    const stuck = [];
    for (let beats = 0; beats <= 12; beats += 1) {
      stuck.push((await beat(caughtUp)).stalled);
      clock.now += 10_000;
    }
    expect(stuck).toEqual([...Array<boolean>(12).fill(false), true]);
  });

  it("refuses one listener past the endpoint's limit with quota_exceeded (listeners), and makes room when one leaves", async () => {
    const { catalog } = await startCatalog();
    const { accountId, endpointId } = await accountWithEndpoint(catalog);
    const put = (id: string) => catalog.putListener({ accountId, listener: { id, endpointId, host: "h", startedAtMs: BigInt(T0) } });
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    await put(a);
    await put(b);
    expect(await failure(put(c))).toMatchObject({ code: "ResourceExhausted", reason: "quota_exceeded", quota: "listeners" });
    await put(a);
    expect(await catalog.deleteListener({ accountId, endpointId, listenerId: a })).toEqual(expect.objectContaining({ deleted: true }));
    await put(c);
    expect((await catalog.listListeners({ accountId, endpointId })).listeners.map((l) => l.id).sort()).toEqual([b, c].sort());
  });

  it("answers not_found for another account's endpoint, and refuses a bad listener", async () => {
    const { catalog } = await startCatalog();
    const { endpointId } = await accountWithEndpoint(catalog);
    const other = await accountWithEndpoint(catalog);
    const listener = { id: randomUUID(), endpointId, host: "h", startedAtMs: BigInt(T0) };
    expect(await failure(catalog.putListener({ accountId: other.accountId, listener }))).toMatchObject({ code: "NotFound", reason: "not_found" });
    expect(await failure(catalog.listListeners({ accountId: other.accountId, endpointId }))).toMatchObject({ reason: "not_found" });
    expect(await failure(catalog.deleteListener({ accountId: other.accountId, endpointId, listenerId: listener.id }))).toMatchObject({ reason: "not_found" });
    const bad = (extra: Record<string, unknown>) => failure(catalog.putListener({ accountId: other.accountId, listener: { ...listener, endpointId: other.endpointId, ...extra } }));
    expect(await bad({ host: "" })).toMatchObject({ field: "listener.host", fieldReason: "required" });
    expect(await bad({ host: "h".repeat(256) })).toMatchObject({ field: "listener.host", fieldReason: "length" });
    expect(await bad({ lastError: "e".repeat(1001) })).toMatchObject({ field: "listener.last_error", fieldReason: "length" });
    expect(await bad({ cursorAtMs: 5n, cursorId: "nope" })).toMatchObject({ field: "listener.cursor_id", fieldReason: "format" });
    expect(await bad({ id: "nope" })).toMatchObject({ field: "listener.id", fieldReason: "format" });
  });
});
