import Database from "better-sqlite3";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CatalogStore } from "@whc/catalog-core";
import { endpointFixture, eventFixture, forwardAttemptFixture, keyHash } from "@whc/catalog-core/testing";
import { tempDir } from "@whc/testing";
import { CANDIDATES_SQL } from "./delivery-control.js";
import { openSqliteStore } from "./sqlite-store.js";
import { openSqliteStoreInWorker } from "./worker-store.js";
import type { DeliveryRef } from "@whc/ports";

/** Far after every capture here: everything scheduled is due. */
const LATER = 4_000_000_000_000;
/** Two destinations: every capture here goes to both (design §17). */
const DESTINATIONS = ["0190a000-0000-7000-8000-00000000000a", "0190a000-0000-7000-8000-00000000000b"];

/** An endpoint with `count` relay captures, spaced 10 ms apart, each to both destinations. */
async function relayCaptures(store: CatalogStore, count: number, clock: { now: number }): Promise<DeliveryRef[]> {
  const name = `acct-${Math.random().toString(36).slice(2)}`;
  const { key } = await store.ensureApiKey(name, keyHash(name), "whc_test", 1);
  const endpoint = await store.createEndpoint(endpointFixture(key.accountId, { operatingMode: "relay" }));
  const deliveries = DESTINATIONS.map((destinationId) => ({ destinationId, target: "https://app.example.test/" }));
  const events = Array.from({ length: count }, () => eventFixture(endpoint, { forward: { scheduled: true, deliveries } }));
  const stamps = await store.appendEvents(events, () => (clock.now += 10));
  return stamps.flatMap((s) => DESTINATIONS.map((destinationId) => ({ accountId: key.accountId, endpointId: endpoint.id, eventId: s!.id, destinationId })));
}
const keyOf = (r: DeliveryRef) => `${r.eventId}/${r.destinationId}`;

describe("embedded SQLite forwarding", () => {
  let where: ReturnType<typeof tempDir>;
  let file: string;
  const closing: CatalogStore[] = [];
  beforeEach(() => {
    where = tempDir("whc-sqlite-forward-");
    file = path.join(where.path, "catalog.db");
  });
  afterEach(async () => {
    for (const store of closing.splice(0)) await store.close();
    where.remove();
  });

  it("never gives two stores on one file the same attempt: two worker threads claiming at once", async () => {
    const setup = openSqliteStore({ file });
    closing.push(setup);
    const refs = await relayCaptures(setup, 40, { now: Date.now() });
    const stores = await Promise.all([openSqliteStoreInWorker({ file }), openSqliteStoreInWorker({ file })]);
    closing.push(...stores);

    // A logical clock both move: a claim lasts one tick, so claims expire and are taken over
    // while their owner is still sending, as when a worker stalls.
    let tick = LATER;
    const taken: string[] = [];
    async function work(store: CatalogStore, owner: string): Promise<void> {
      for (let round = 0; round < 5000; round += 1) {
        const now = (tick += 1);
        const { claims } = await store.claimDeliveries(owner, now, 1, 3);
        if (claims.length === 0 && (await store.outboxStats()).pending === 0) return;
        for (const c of claims) {
          taken.push(`${keyOf(c)}#${c.attempt}`);
          // Read the event first, as a sender does: meanwhile the other store may take over.
          await store.getEvent(c.accountId, c.endpointId, c.eventId);
          const state = c.attempt >= 3 ? "delivered" : "pending";
          await store.recordForwardAttempt(c, forwardAttemptFixture(c.attempt), { kind: "worker", owner, state, nextAttemptAt: now });
        }
      }
    }
    await Promise.all([work(stores[0], "w0"), work(stores[1], "w1")]);

    expect(new Set(taken).size).toBe(taken.length);
    expect(await setup.outboxStats()).toEqual({ pending: 0, oldestDueAt: undefined });
    for (const ref of refs) {
      const event = await setup.getEvent(ref.accountId, ref.endpointId, ref.eventId);
      const forward = event?.deliveries.find((d) => d.destinationId === ref.destinationId);
      const numbers = taken.filter((t) => t.startsWith(`${keyOf(ref)}#`)).map((t) => Number(t.split("#")[1]));
      expect(forward?.state).toBe("delivered");
      // Only claims gave numbers out: 1..k, each taken once and recorded once.
      expect(numbers.sort((a, b) => a - b)).toEqual(Array.from({ length: numbers.length }, (_, i) => i + 1));
      expect(forward?.attempts.map((a) => a.n)).toEqual(numbers);
    }
  }, 120_000);

  it("deletes deliveries and attempts with their event, their endpoint and the retention purge", async () => {
    const store = openSqliteStore({ file });
    closing.push(store);
    const clock = { now: Date.now() };
    const a = await relayCaptures(store, 3, clock);
    const b = await relayCaptures(store, 1, clock);
    for (const ref of [...a, ...b]) {
      for (const n of [1, 2]) await store.recordForwardAttempt(ref, forwardAttemptFixture(n, { trigger: "manual" }), { kind: "direct" });
    }
    const reader = new Database(file, { readonly: true });
    try {
      const count = (table: string) => (reader.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
      const rows = () => [count("delivery_attempts"), count("deliveries")];
      expect(rows()).toEqual([16, 8]);
      await store.deleteEvent(a[0]!.accountId, a[0]!.endpointId, a[0]!.eventId);
      expect(rows()).toEqual([12, 6]);
      await store.deleteEndpoint(b[0]!.accountId, b[0]!.endpointId);
      expect(rows()).toEqual([8, 4]);
      await store.purgeEvents(LATER, Date.now());
      expect(rows()).toEqual([0, 0]);
    } finally {
      reader.close();
    }
  });

  it.each([
    ["on the caller's thread", async (f: string) => openSqliteStore({ file: f })],
    ["on its own thread", (f: string) => openSqliteStoreInWorker({ file: f })],
  ])("commits forwarding's writes asked for at once together, and one that fails fails alone (%s)", async (_where, open) => {
    const store = await open(file);
    closing.push(store);
    const refs = await relayCaptures(store, 2, { now: Date.now() });
    // A real failure inside the shared transaction: SQLite refuses one attempt's row.
    const admin = new Database(file);
    admin.exec(`CREATE TRIGGER refuse_attempt BEFORE INSERT ON delivery_attempts WHEN NEW.url = 'https://refused.test/'
      BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`);
    admin.close();
    const attempt = (url: string) => forwardAttemptFixture(1, { trigger: "manual", url, status: 200 });
    const outcomes = await Promise.allSettled([
      ...refs.map((ref, i) => store.recordForwardAttempt(ref, attempt(i === 1 ? "https://refused.test/" : "https://app.example.test/"), { kind: "direct" })),
      // A begin and a proxy's answer in the same commit (ADR 0098) are not undone by the refusal.
      store.beginForwardAttempt(refs[1]!, "https://app.example.test/"),
      store.recordProxyAnswer(refs[1]!, 299, false),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled", "fulfilled", "fulfilled", "fulfilled"]);
    expect(outcomes.slice(4).map((o) => (o.status === "fulfilled" ? o.value : o.reason))).toEqual([1, true]);
    expect((await store.getEvent(refs[1]!.accountId, refs[1]!.endpointId, refs[1]!.eventId))?.responseCode).toBe(299);
    const states = await Promise.all(
      refs.map(async (r) => (await store.getEvent(r.accountId, r.endpointId, r.eventId))?.deliveries.find((d) => d.destinationId === r.destinationId)),
    );
    expect(states.map((d) => [d?.state, d?.attempts.length])).toEqual([
      ["delivered", 1],
      ["pending", 0],
      ["delivered", 1],
      ["delivered", 1],
    ]);
  });

  it("claims through the partial outbox index", () => {
    const store = openSqliteStore({ file });
    closing.push(store);
    const db = new Database(file, { readonly: true });
    try {
      const plan = (db.prepare(`EXPLAIN QUERY PLAN ${CANDIDATES_SQL}`).all(2, "[]", 10) as { detail: string }[]).map((r) => r.detail);
      expect(plan.join("\n")).toMatch(/USING (COVERING )?INDEX deliveries_outbox/);
    } finally {
      db.close();
    }
  });
});
