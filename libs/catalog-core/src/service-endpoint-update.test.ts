import { afterEach, describe, expect, it } from "vitest";
import { createHash, randomUUID } from "node:crypto";
import path from "node:path";
import { Code, ConnectError, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import { CatalogService, ErrorDetailSchema, type Endpoint } from "@whc/contracts";
// The service is tested over a real store (a test-only cycle, allowed in eslint.config.js).
import { openSqliteStore } from "@whc/catalog-sqlite";
import { createLogger } from "@whc/logging";
import { serverInterceptor } from "@whc/rpc";
import { tempDir } from "@whc/testing";
import { createCatalogService } from "./service.js";

/*
 * UpdateEndpoint, the endpoint's response and its sequence, through the catalog service over
 * the real embedded store, called with a typed client on Connect's router transport.
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const UNKNOWN_ID = "01890000-0000-7000-8000-000000000000";

async function startCatalog() {
  const dir = tempDir("whc-catalog-update-");
  const store = openSqliteStore({ file: path.join(dir.path, "catalog.db") });
  cleanups.push(async () => {
    await store.close();
    dir.remove();
  });
  const clock = { now: 1_800_000_000_000 };
  const transport = createRouterTransport((router) => router.service(CatalogService, createCatalogService(store, { now: () => clock.now })), {
    router: { interceptors: [serverInterceptor(createLogger("catalog-test", "silent"))] },
  });
  return { catalog: createClient(CatalogService, transport), clock };
}

type Catalog = Client<typeof CatalogService>;

async function accountWithEndpoint(catalog: Catalog, extra: Partial<Omit<Endpoint, "$typeName">> = {}) {
  const name = `acct-${randomUUID()}`;
  const { key } = await catalog.ensureApiKey({ accountName: name, keyHash: createHash("sha256").update(name).digest(), prefix: "whc_t" });
  const accountId = key!.accountId;
  const { endpoint } = await catalog.createEndpoint({
    endpoint: { accountId, slug: `ep-${randomUUID().slice(0, 8)}`, displayName: "Orders", operatingMode: "capture", status: "active", provider: "generic", source: "api", ...extra },
  });
  return { accountId, endpoint: endpoint! };
}

async function failure(call: Promise<unknown>) {
  const err = await call.then(
    () => expect.unreachable("the call succeeded"),
    (e: unknown) => ConnectError.from(e),
  );
  const [detail] = err.findDetails(ErrorDetailSchema);
  return { code: Code[err.code], reason: detail?.reason, field: detail?.field, fieldReason: detail?.fieldReason };
}

describe("UpdateEndpoint", () => {
  it("changes the fields the patch names and answers the endpoint, updatedAt moved", async () => {
    const { catalog, clock } = await startCatalog();
    const { accountId, endpoint } = await accountWithEndpoint(catalog, { responseJson: '{"status":201}' });
    expect(endpoint.responseJson).toBe('{"status":201}');
    clock.now += 5000;
    const { endpoint: updated } = await catalog.updateEndpoint({
      accountId,
      endpointId: endpoint.id,
      patch: { displayName: "Renamed", status: "paused", replayFromApi: false, responseJson: "" },
    });
    expect(updated).toMatchObject({ displayName: "Renamed", status: "paused", replayFromApi: false, responseJson: "", operatingMode: "capture" });
    expect(updated!.updatedAtMs).toBe(BigInt(clock.now));
    expect(updated!.createdAtMs).toBe(endpoint.createdAtMs);
    expect((await catalog.getEndpoint({ accountId, endpointId: endpoint.id })).endpoint).toEqual(updated);
  });

  it("rotates the secret: the previous one only with include_sealed_secret, the rotation time always", async () => {
    const { catalog, clock } = await startCatalog();
    const { accountId, endpoint } = await accountWithEndpoint(catalog, { sealedSecret: new Uint8Array([1, 1]) });
    clock.now += 1000;
    const { endpoint: rotated } = await catalog.updateEndpoint({ accountId, endpointId: endpoint.id, patch: { sealedSecret: new Uint8Array([2, 2]) } });
    expect(rotated).toMatchObject({ secretSet: true, secretRotatedAtMs: BigInt(clock.now), sealedSecret: new Uint8Array(), sealedPreviousSecret: new Uint8Array() });
    const { endpoint: sealed } = await catalog.getEndpoint({ endpointId: endpoint.id, includeSealedSecret: true });
    expect([...sealed!.sealedSecret]).toEqual([2, 2]);
    expect([...sealed!.sealedPreviousSecret]).toEqual([1, 1]);

    const { endpoint: cleared } = await catalog.updateEndpoint({ accountId, endpointId: endpoint.id, patch: { clearSecret: true } });
    expect(cleared!.secretSet).toBe(false);
    expect(cleared!.secretRotatedAtMs).toBeUndefined();
    const { endpoint: none } = await catalog.getEndpoint({ endpointId: endpoint.id, includeSealedSecret: true });
    expect([none!.sealedSecret.length, none!.sealedPreviousSecret.length]).toEqual([0, 0]);
  });

  it("is not_found for another account's endpoint or an unknown one, and refuses bad requests", async () => {
    const { catalog } = await startCatalog();
    const a = await accountWithEndpoint(catalog);
    const b = await accountWithEndpoint(catalog);
    const patch = { displayName: "taken" };
    const notFound = { code: "NotFound", reason: "not_found" };
    expect(await failure(catalog.updateEndpoint({ accountId: b.accountId, endpointId: a.endpoint.id, patch }))).toMatchObject(notFound);
    expect(await failure(catalog.updateEndpoint({ accountId: a.accountId, endpointId: UNKNOWN_ID, patch }))).toMatchObject(notFound);
    expect((await catalog.getEndpoint({ accountId: a.accountId, endpointId: a.endpoint.id })).endpoint).toEqual(a.endpoint);

    const invalid = (field: string, fieldReason: string) => ({ code: "InvalidArgument", reason: "validation_failed", field, fieldReason });
    expect(await failure(catalog.updateEndpoint({ accountId: a.accountId, endpointId: "nope", patch }))).toEqual(invalid("endpoint_id", "format"));
    expect(await failure(catalog.updateEndpoint({ endpointId: a.endpoint.id, patch }))).toEqual(invalid("account_id", "required"));
    expect(await failure(catalog.updateEndpoint({ accountId: a.accountId, endpointId: a.endpoint.id }))).toEqual(invalid("patch", "required"));
    expect(
      await failure(catalog.updateEndpoint({ accountId: a.accountId, endpointId: a.endpoint.id, patch: { sealedSecret: new Uint8Array() } })),
    ).toEqual(invalid("patch.sealed_secret", "length"));
  });
});

describe("AppendEvents with a response sequence", () => {
  it("answers each event's sequence index and stored response code; resetSequence starts over", async () => {
    const { catalog } = await startCatalog();
    const { accountId, endpoint } = await accountWithEndpoint(catalog);
    const event = (sequenceStatuses: number[] = [], responseCode = 200) => ({
      accountId,
      endpointId: endpoint.id,
      method: "POST",
      responseCode,
      sequenceStatuses,
    });
    const statuses = [500, 500, 200];
    const { events } = await catalog.appendEvents({ events: [event(statuses), event([], 202), event(statuses), event(statuses), event(statuses)] });
    expect(events.map((e) => [e.responseCode, e.sequenceIndex])).toEqual([
      [500, 0n],
      [202, 0n],
      [500, 1n],
      [200, 2n],
      [500, 3n],
    ]);
    const listed = await catalog.listEvents({ accountId, endpointId: endpoint.id, responseCode: 500 });
    expect(listed.events.map((e) => e.id).sort()).toEqual([events[0]!.id, events[2]!.id, events[4]!.id].sort());

    await catalog.updateEndpoint({ accountId, endpointId: endpoint.id, patch: { resetSequence: true } });
    const again = await catalog.appendEvents({ events: [event(statuses)] });
    expect(again.events.map((e) => [e.responseCode, e.sequenceIndex])).toEqual([[500, 0n]]);
  });
});
