import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CatalogStore, EndpointRecord } from "@whc/catalog-core";
import { endpointFixture, eventFixture, keyHash } from "@whc/catalog-core/testing";
import { openCatalogDatabase } from "./database.js";
import { createSqliteStore } from "./sqlite-store.js";
import { auditFixture, catalogWithEndpoint, expectReason } from "./testing/index.js";

describe("embedded SQLite: driver failures come out as AppError reasons", () => {
  let remove: () => void;
  let file: string;
  let store: CatalogStore;
  let endpoint: EndpointRecord;
  const clock = Date.now;

  beforeEach(async () => {
    ({ file, store, endpoint, remove } = await catalogWithEndpoint("errors"));
  });
  afterEach(async () => {
    await store.close();
    remove();
  });

  it("a read-only database: writes are service_unavailable (not slug_taken), reads still answer", async () => {
    const [stored] = await store.appendEvents([eventFixture(endpoint)], clock);
    endpoint = (await store.getEndpoint(endpoint.id))!;
    await store.close();
    store = createSqliteStore(new Database(file, { readonly: true }));
    await expectReason(store.appendEvents([eventFixture(endpoint)], clock), "service_unavailable", "SQLITE_READONLY");
    await expectReason(store.createEndpoint(endpointFixture(endpoint.accountId)), "service_unavailable", "SQLITE_READONLY");
    await expectReason(store.ensureApiKey("other", keyHash("other"), "whc_o", 2), "service_unavailable", "SQLITE_READONLY");
    await expectReason(store.purgeEvents(Date.now(), Date.now()), "service_unavailable");
    expect(await store.getEndpoint(endpoint.id)).toEqual(endpoint);
    // The first read would record readAt: refused, it is shown unread rather than not at all.
    const read = await store.getEvent(endpoint.accountId, endpoint.id, stored!.id, Date.now());
    expect(read).toMatchObject({ id: stored!.id, readAt: undefined });
  });

  it("a full disk: appends are service_unavailable, and succeed again once there is room", async () => {
    await store.close();
    const db = openCatalogDatabase(file);
    store = createSqliteStore(db);
    const pages = db.pragma("page_count", { simple: true }) as number;
    db.pragma(`max_page_count = ${pages}`);
    const big = Array.from({ length: 20 }, () =>
      eventFixture(endpoint, { body: { ciphertext: new Uint8Array(8000), wrappedKey: new Uint8Array(60), keyId: "k1" } }),
    );
    await expectReason(store.appendEvents(big, clock), "service_unavailable", "SQLITE_FULL");
    expect((await store.getEndpoint(endpoint.id))?.eventCount).toBe(0);
    db.pragma(`max_page_count = ${pages * 100}`);
    expect(await store.appendEvents(big, clock)).toHaveLength(20);
  });

  it("a closed store: every call is service_unavailable, ping answers false", async () => {
    await store.close();
    const err = await expectReason(store.listEndpoints(endpoint.accountId), "service_unavailable");
    expect(err.message).toBe("embedded store closed");
    await expectReason(store.appendEvents([eventFixture(endpoint)], clock), "service_unavailable");
    expect(await store.ping()).toBe(false);
  });

  it("a duplicate row is a conflict; a duplicate slug stays slug_taken", async () => {
    await store.recordReplayAudit(auditFixture("01a20000-0000-7000-8000-000000000001"));
    await expectReason(store.recordReplayAudit(auditFixture("01a20000-0000-7000-8000-000000000001")), "conflict", "SQLITE_CONSTRAINT_PRIMARYKEY");
    const err = await expectReason(store.createEndpoint(endpointFixture(endpoint.accountId, { slug: endpoint.slug })), "slug_taken");
    expect(err.field).toBe("slug");
  });

  it("anything else is internal_error, without the driver's text", async () => {
    const other = new Database(file);
    other.exec("DROP TABLE replay_audit");
    other.close();
    const err = await expectReason(store.recordReplayAudit(auditFixture("01a20000-0000-7000-8000-000000000002")), "internal_error", "SQLITE_ERROR");
    expect(err.message).toBe("embedded store: SQLITE_ERROR");
    expect((err.cause as Error).message).toContain("no such table");
  });
});
