import { describe, it, expect, beforeEach, afterEach } from "vitest";
import fc from "fast-check";
import { AppError } from "@whc/errors";
import type { CatalogStore } from "../ports.js";
import type { EndpointRecord, EventQuery } from "../types.js";
import { endpointUpdateContract, responseSequenceContract, type ContractContext } from "./endpoint-contract.js";
import { endpointFixture, eventFixture, keyHash, listAllPages, token } from "./fixtures.js";
import { forwardingContract } from "./forward-contract.js";
import { deliveryControlContract } from "./control-contract.js";
import { endpointListContract, endpointQuotaContract } from "./endpoint-list-contract.js";
import { listenerContract } from "./listener-contract.js";
import { redactionContract } from "./redaction-contract.js";
import { auditContract } from "./audit-contract.js";
import { apiKeyLifecycleContract } from "./api-key-lifecycle-contract.js";
import { alertContract } from "./alert-contract.js";
import { schemaContract } from "./schema-contract.js";
import { dedupeContract } from "./dedupe-contract.js";
import { redeliveryContract } from "./redelivery-contract.js";

export interface ContractOptions {
  open: () => Promise<CatalogStore>;
  /**
   * Opens again what `open` last created (the same file or database), after the store was
   * closed: the tests of what survives a restart run only where it is given.
   */
  reopen?: () => Promise<CatalogStore>;
  /** Removes whatever `open` created (files, databases). */
  cleanup?: () => Promise<void>;
  /**
   * Opens a second store on what `open` last created, beside the first, as another catalog
   * process would: the tests of concurrent writers through two stores run only where it is given.
   */
  another?: () => Promise<CatalogStore>;
}

/**
 * The one behaviour every CatalogStore adapter must have. Run against the embedded store
 * always, and against MongoDB whenever WHC_TEST_MONGODB_URI is set.
 */
export function catalogStoreContract(name: string, options: ContractOptions): void {
  describe(`CatalogStore contract: ${name}`, () => {
    let store: CatalogStore;
    const clock = Date.now;

    beforeEach(async () => {
      store = await options.open();
    });

    afterEach(async () => {
      await store.close();
      await options.cleanup?.();
    });

    async function accountWithEndpoint(
      accountName = `acct-${Math.random().toString(36).slice(2)}`,
      overrides: Partial<EndpointRecord> = {},
    ) {
      const { key } = await store.ensureApiKey(accountName, keyHash(accountName), "whc_test", Date.now());
      const endpoint = await store.createEndpoint(endpointFixture(key.accountId, overrides));
      return { accountId: key.accountId, endpoint };
    }

    const reopen = options.reopen;
    const context: ContractContext = {
      store: () => store,
      clock: () => clock,
      accountWithEndpoint,
      reopen: reopen
        ? async () => {
            await store.close();
            store = await reopen();
          }
        : undefined,
    };

    function query(accountId: string, endpointId: string, extra: Partial<EventQuery> = {}): EventQuery {
      return { accountId, endpointId, limit: 50, ...extra };
    }

    describe("api keys", () => {
      it("registers a key once and finds it by hash", async () => {
        const first = await store.ensureApiKey("acme", keyHash("k1"), "whc_k1", 1000);
        const again = await store.ensureApiKey("acme", keyHash("k1"), "whc_k1", 2000);
        expect(first.created).toBe(true);
        expect(again.created).toBe(false);
        expect(again.key.id).toBe(first.key.id);
        const found = await store.findApiKeyByHash(keyHash("k1"));
        expect(found?.accountName).toBe("acme");
        expect(Buffer.from(found!.keyHash).equals(Buffer.from(keyHash("k1")))).toBe(true);
        expect(await store.findApiKeyByHash(keyHash("nope"))).toBeUndefined();
      });

      it("puts a second key of the same account name in the same account", async () => {
        const a = await store.ensureApiKey("acme", keyHash("k1"), "p", 1);
        const b = await store.ensureApiKey("acme", keyHash("k2"), "p", 2);
        expect(b.key.accountId).toBe(a.key.accountId);
        expect((await store.listApiKeys({ accountName: "acme" })).map((k) => k.id)).toEqual([a.key.id, b.key.id]);
        expect((await store.listApiKeys({ accountId: a.key.accountId })).map((k) => k.id)).toEqual([a.key.id, b.key.id]);
      });

      it("refuses to move a key to another account", async () => {
        await store.ensureApiKey("acme", keyHash("k1"), "p", 1);
        await expect(store.ensureApiKey("other", keyHash("k1"), "p", 2)).rejects.toSatisfy(
          (e: unknown) => AppError.is(e) && e.reason === "conflict",
        );
      });

      it("revokes keys and counts only active ones", async () => {
        const { key } = await store.ensureApiKey("acme", keyHash("k1"), "p", 1);
        await store.ensureApiKey("acme", keyHash("k2"), "p", 1);
        expect(await store.countActiveApiKeys()).toBe(2);
        const revoked = await store.revokeApiKey(key.id, 5000);
        expect(revoked?.revokedAt).toBe(5000);
        expect((await store.findApiKeyByHash(keyHash("k1")))?.revokedAt).toBe(5000);
        expect(await store.countActiveApiKeys()).toBe(1);
        expect(await store.revokeApiKey("00000000-0000-7000-8000-000000000000", 1)).toBeUndefined();
      });

      it("gives ensured keys every scope, and creates keys with scopes, endpoints, expiry and a name", async () => {
        const { key: first } = await store.ensureApiKey("acme", keyHash("k1"), "whc_k1", 1000, "bootstrap");
        expect(first).toMatchObject({ name: "bootstrap", scopes: ["*"], endpointIds: [], expiresAt: undefined, lastUsedAt: undefined });
        const restricted = {
          id: "01a20000-0000-7000-8000-0000000000a1",
          accountId: first.accountId,
          name: "ci",
          prefix: "whc_k2",
          keyHash: keyHash("k2"),
          scopes: ["events:read", "events:replay"],
          endpointIds: ["01a20000-0000-7000-8000-0000000000e1"],
          createdAt: 2000,
          expiresAt: 9000,
          lastUsedAt: undefined,
          revokedAt: undefined,
        };
        const created = await store.createApiKey(restricted);
        const { keyHash: _hash, ...shown } = restricted;
        expect(created).toMatchObject({ ...shown, accountName: "acme" });
        expect(Buffer.from(created.keyHash).equals(Buffer.from(restricted.keyHash))).toBe(true);
        expect(await store.findApiKeyByHash(keyHash("k2"))).toMatchObject({ ...shown, accountName: "acme" });
        expect((await store.listApiKeys({ accountId: first.accountId })).map((k) => k.name)).toEqual(["bootstrap", "ci"]);
        // Another account's list, and an unknown account, are left alone.
        await store.ensureApiKey("other", keyHash("o1"), "whc_o1", 3000);
        expect((await store.listApiKeys({ accountName: "other" })).map((k) => k.prefix)).toEqual(["whc_o1"]);
        await expect(store.createApiKey({ ...restricted, id: "01a20000-0000-7000-8000-0000000000a2", keyHash: keyHash("k3"), accountId: "01a20000-0000-7000-8000-00000000dead" })).rejects.toSatisfy(
          (e: unknown) => AppError.is(e) && e.reason === "not_found",
        );
        await expect(store.createApiKey({ ...restricted, id: "01a20000-0000-7000-8000-0000000000a3" })).rejects.toSatisfy(
          (e: unknown) => AppError.is(e) && e.reason === "conflict",
        );
      });

      it("revokes only within the account named, once, and moves lastUsedAt only forward past the interval", async () => {
        const { key } = await store.ensureApiKey("acme", keyHash("k1"), "p", 1);
        const { key: other } = await store.ensureApiKey("other", keyHash("o1"), "p", 1);
        expect(await store.revokeApiKey(key.id, 5000, other.accountId)).toBeUndefined();
        expect((await store.findApiKeyByHash(keyHash("k1")))?.revokedAt).toBeUndefined();
        expect((await store.revokeApiKey(key.id, 5000, key.accountId))?.revokedAt).toBe(5000);
        expect((await store.revokeApiKey(key.id, 6000, key.accountId))?.revokedAt).toBe(5000);

        await store.touchApiKey(other.id, 100_000, 40_000);
        expect((await store.findApiKeyByHash(keyHash("o1")))?.lastUsedAt).toBe(100_000);
        // Within the interval: left as it is.
        await store.touchApiKey(other.id, 130_000, 70_000);
        expect((await store.findApiKeyByHash(keyHash("o1")))?.lastUsedAt).toBe(100_000);
        await store.touchApiKey(other.id, 170_000, 110_000);
        expect((await store.findApiKeyByHash(keyHash("o1")))?.lastUsedAt).toBe(170_000);
      });
    });

    describe("endpoints", () => {
      it("creates, reads, lists and deletes within one account", async () => {
        const { accountId, endpoint } = await accountWithEndpoint();
        expect(endpoint.eventCount).toBe(0);
        expect(await store.getEndpoint(endpoint.id, accountId)).toEqual(endpoint);
        expect(await store.getEndpoint(endpoint.id)).toEqual(endpoint);
        expect((await store.listEndpoints(accountId)).map((e) => e.id)).toEqual([endpoint.id]);
        expect(await store.deleteEndpoint(accountId, endpoint.id)).toBe(true);
        expect(await store.getEndpoint(endpoint.id)).toBeUndefined();
        expect(await store.deleteEndpoint(accountId, endpoint.id)).toBe(false);
      });

      it("keeps the sealed secret and the flags", async () => {
        const { accountId } = await accountWithEndpoint();
        const e = await store.createEndpoint(
          endpointFixture(accountId, {
            sealedSecret: new Uint8Array([7, 7, 7]),
            replayFromApi: false,
            status: "paused",
            genericSignatureHeader: "X-Sig",
          }),
        );
        const read = await store.getEndpoint(e.id);
        expect(Buffer.from(read!.sealedSecret!)).toEqual(Buffer.from([7, 7, 7]));
        expect(read!.replayFromApi).toBe(false);
        expect(read!.status).toBe("paused");
        expect(read!.genericSignatureHeader).toBe("X-Sig");
      });

      it("never shows an endpoint to another account", async () => {
        const a = await accountWithEndpoint("a");
        const b = await accountWithEndpoint("b");
        expect(await store.getEndpoint(a.endpoint.id, b.accountId)).toBeUndefined();
        expect((await store.listEndpoints(b.accountId)).map((e) => e.id)).toEqual([b.endpoint.id]);
        expect(await store.deleteEndpoint(b.accountId, a.endpoint.id)).toBe(false);
        expect(await store.getEndpoint(a.endpoint.id, a.accountId)).toBeDefined();
      });

      it("refuses a slug the account already has, but not another account's", async () => {
        const a = await accountWithEndpoint("a");
        const b = await accountWithEndpoint("b");
        await expect(
          store.createEndpoint(endpointFixture(a.accountId, { slug: a.endpoint.slug })),
        ).rejects.toSatisfy((e: unknown) => AppError.is(e) && e.reason === "slug_taken");
        await expect(store.createEndpoint(endpointFixture(b.accountId, { slug: a.endpoint.slug }))).resolves.toBeDefined();
      });
    });

    endpointListContract(context);
    endpointQuotaContract(context, options.another);
    endpointUpdateContract(context);
    responseSequenceContract(context);
    forwardingContract(context);
    deliveryControlContract(context);
    redactionContract(context);
    listenerContract(context, options.another);
    auditContract(context);
    apiKeyLifecycleContract(context, options.another);
    alertContract(context);
    schemaContract(context);
    dedupeContract(context, options.another);
    redeliveryContract(context);

    describe("events", () => {
      it("stamps in order and lists newest first with exact counters", async () => {
        const { accountId, endpoint } = await accountWithEndpoint();
        const stamps = await store.appendEvents(
          [eventFixture(endpoint), eventFixture(endpoint), eventFixture(endpoint)],
          clock,
        );
        expect(stamps).toHaveLength(3);
        const page = await store.listEvents(query(accountId, endpoint.id));
        expect(page.events.map((e) => e.id)).toEqual(stamps.map((s) => s!.id).reverse());
        expect(page.hasOlder).toBe(false);
        const e = await store.getEndpoint(endpoint.id);
        expect(e?.eventCount).toBe(3);
        expect(e?.lastEventAt).toBe(stamps[2]!.receivedAt);
      });

      it("stamps each endpoint after its last stamp, whatever the clock reads and after deletes", async () => {
        const { accountId, endpoint } = await accountWithEndpoint();
        const other = await accountWithEndpoint();
        const late = 1_900_000_000_000;
        const [, newest] = await store.appendEvents([eventFixture(endpoint), eventFixture(endpoint)], () => late);
        // The newest event goes and the clock steps back: the next stamp still follows it, so a
        // reader whose cursor is at the deleted event misses nothing.
        expect(await store.deleteEvent(accountId, endpoint.id, newest!.id)).toBe(true);
        const [next] = await store.appendEvents([eventFixture(endpoint)], () => late - 5000);
        expect(next!.receivedAt).toBe(late);
        expect(next!.id > newest!.id).toBe(true);
        // Another endpoint keeps its own stamps: it takes the clock as it reads.
        const [elsewhere] = await store.appendEvents([eventFixture(other.endpoint)], () => late - 5000);
        expect(elsewhere!.receivedAt).toBe(late - 5000);
        if (!context.reopen) return;
        await context.reopen();
        const [afterRestart] = await store.appendEvents([eventFixture(endpoint)], () => 1);
        expect(afterRestart!.receivedAt).toBe(late);
        expect(afterRestart!.id > next!.id).toBe(true);
        const page = await store.listEvents(query(accountId, endpoint.id, { after: next! }));
        expect(page.events.map((e) => e.id)).toEqual([afterRestart!.id]);
      });

      it("round-trips every field of an event", async () => {
        const { accountId, endpoint } = await accountWithEndpoint();
        const input = eventFixture(endpoint, { path: "/sub?x=1", method: "PUT", responseCode: 413, truncated: true });
        const [s] = await store.appendEvents([input], clock);
        const read = await store.getEvent(accountId, endpoint.id, s!.id);
        expect(read).toMatchObject({
          id: s!.id,
          receivedAt: s!.receivedAt,
          method: "PUT",
          path: "/sub?x=1",
          headers: input.headers,
          responseCode: 413,
          truncated: true,
          canonicalEventType: "invoice.paid",
        });
        expect(Buffer.from(read!.body!.ciphertext)).toEqual(Buffer.from(input.body!.ciphertext));
        expect(read!.readAt).toBeUndefined();
      });

      it("sets readAt on the first read only", async () => {
        const { accountId, endpoint } = await accountWithEndpoint();
        const [s] = await store.appendEvents([eventFixture(endpoint)], clock);
        expect((await store.getEvent(accountId, endpoint.id, s!.id, 1000))?.readAt).toBe(1000);
        expect((await store.getEvent(accountId, endpoint.id, s!.id, 2000))?.readAt).toBe(1000);
        const page = await store.listEvents(query(accountId, endpoint.id));
        expect(page.events[0]?.readAt).toBe(1000);
      });

      it("hides events from other accounts and other endpoints", async () => {
        const a = await accountWithEndpoint("a");
        const b = await accountWithEndpoint("b");
        const [s] = await store.appendEvents([eventFixture(a.endpoint)], clock);
        expect(await store.getEvent(b.accountId, a.endpoint.id, s!.id)).toBeUndefined();
        expect(await store.getEvent(a.accountId, b.endpoint.id, s!.id)).toBeUndefined();
        expect(await store.deleteEvent(b.accountId, a.endpoint.id, s!.id)).toBe(false);
        expect((await store.listEvents(query(b.accountId, b.endpoint.id))).events).toEqual([]);
      });

      it("deletes one event and keeps the count exact", async () => {
        const { accountId, endpoint } = await accountWithEndpoint();
        const [s1, s2] = await store.appendEvents([eventFixture(endpoint), eventFixture(endpoint)], clock);
        expect(await store.deleteEvent(accountId, endpoint.id, s1!.id)).toBe(true);
        expect(await store.deleteEvent(accountId, endpoint.id, s1!.id)).toBe(false);
        expect((await store.listEvents(query(accountId, endpoint.id))).events.map((e) => e.id)).toEqual([s2!.id]);
        expect((await store.getEndpoint(endpoint.id))?.eventCount).toBe(1);
      });

      it("removes an endpoint's events with it", async () => {
        const { accountId, endpoint } = await accountWithEndpoint();
        const [s] = await store.appendEvents([eventFixture(endpoint)], clock);
        await store.deleteEndpoint(accountId, endpoint.id);
        expect(await store.getEvent(accountId, endpoint.id, s!.id)).toBeUndefined();
      });

      it("stores nothing for an endpoint deleted before the commit, and says so per event", async () => {
        const live = await accountWithEndpoint("live");
        const gone = await accountWithEndpoint("gone");
        await store.deleteEndpoint(gone.accountId, gone.endpoint.id);
        const results = await store.appendEvents([eventFixture(gone.endpoint), eventFixture(live.endpoint)], clock);
        expect(results).toHaveLength(2);
        expect(results[0]).toBeUndefined();
        expect(results[1]?.id).toEqual(expect.any(String));
        expect((await store.listEvents(query(live.accountId, live.endpoint.id))).events.map((e) => e.id)).toEqual([results[1]!.id]);
        expect((await store.getEndpoint(live.endpoint.id))?.eventCount).toBe(1);
      });

      it("pages with before/after cursors without skipping or repeating", async () => {
        const { accountId, endpoint } = await accountWithEndpoint();
        const stamps = await store.appendEvents(
          Array.from({ length: 25 }, () => eventFixture(endpoint)),
          clock,
        );
        const newestFirst = stamps.map((s) => s!.id).reverse();
        const seen: string[] = [];
        let page = await store.listEvents(query(accountId, endpoint.id, { limit: 10 }));
        seen.push(...page.events.map((e) => e.id));
        while (page.hasOlder) {
          const last = page.events[page.events.length - 1]!;
          page = await store.listEvents(
            query(accountId, endpoint.id, { limit: 10, before: { receivedAt: last.receivedAt, id: last.id } }),
          );
          seen.push(...page.events.map((e) => e.id));
        }
        expect(seen).toEqual(newestFirst);

        // after: the `limit` events just newer than the cursor, still newest first.
        const pivot = stamps[4]!;
        const after = await store.listEvents(query(accountId, endpoint.id, { limit: 3, after: pivot }));
        expect(after.events.map((e) => e.id)).toEqual([stamps[7]!.id, stamps[6]!.id, stamps[5]!.id]);
        expect(after.hasOlder).toBe(true);
        const none = await store.listEvents(query(accountId, endpoint.id, { after: stamps[24]! }));
        expect(none.events).toEqual([]);
      });

      it("applies every filter, alone and together", async () => {
        const { accountId, endpoint } = await accountWithEndpoint();
        let time = Date.now();
        const spaced = () => (time += 10);
        const [a, b, c] = await store.appendEvents(
          [
            eventFixture(endpoint, { canonicalEventType: "a", provider: "stripe", responseCode: 200, verification: "verified" }),
            eventFixture(endpoint, { canonicalEventType: "b", provider: "github", responseCode: 413, verification: "failed" }),
            eventFixture(endpoint, { canonicalEventType: "a", provider: "github", responseCode: 200, verification: "unverified" }),
          ],
          spaced,
        );
        const ids = async (extra: Partial<EventQuery>) =>
          (await store.listEvents(query(accountId, endpoint.id, extra))).events.map((e) => e.id);
        expect(await ids({ eventType: "a" })).toEqual([c!.id, a!.id]);
        expect(await ids({ provider: "github" })).toEqual([c!.id, b!.id]);
        expect(await ids({ responseCode: 413 })).toEqual([b!.id]);
        expect(await ids({ verification: "verified" })).toEqual([a!.id]);
        expect(await ids({ eventType: "a", provider: "github" })).toEqual([c!.id]);
        expect(await ids({ fromMs: b!.receivedAt })).toEqual([c!.id, b!.id]);
        expect(await ids({ toMs: b!.receivedAt })).toEqual([a!.id]);
      });

      it("searches with AND semantics and leaves metadata-only events out, counting them", async () => {
        const { accountId, endpoint } = await accountWithEndpoint();
        const [red, blue, both] = await store.appendEvents(
          [
            eventFixture(endpoint, { words: ["red", "apple"] }),
            eventFixture(endpoint, { words: ["blue", "apple"] }),
            eventFixture(endpoint, { words: ["red", "blue"], truncated: true }),
            eventFixture(endpoint, { body: undefined, words: [] }),
            eventFixture(endpoint, { body: undefined, words: [] }),
          ],
          clock,
        );
        const search = async (words: string[], extra: Partial<EventQuery> = {}) =>
          store.listEvents(query(accountId, endpoint.id, { searchTokens: words.map(token), ...extra }));
        expect((await search(["red"])).events.map((e) => e.id)).toEqual([both!.id, red!.id]);
        expect((await search(["red", "blue"])).events.map((e) => e.id)).toEqual([both!.id]);
        expect((await search(["apple"])).events.map((e) => e.id)).toEqual([blue!.id, red!.id]);
        expect((await search(["missing"])).events).toEqual([]);
        const page = await search(["red"]);
        expect(page.searchExcludedMetadataOnlyCount).toBe(2);
        expect(page.events[0]?.truncated).toBe(true);
        // a search pages like a list
        const first = await search(["apple"], { limit: 1 });
        expect(first.hasOlder).toBe(true);
        const second = await search(["apple"], { limit: 1, before: first.events[0]! });
        expect(second.events.map((e) => e.id)).toEqual([red!.id]);
        expect(second.hasOlder).toBe(false);
        // without a search, nothing is excluded
        expect((await store.listEvents(query(accountId, endpoint.id))).events).toHaveLength(5);
      });

      it("purges old events and records it on the endpoint", async () => {
        const { accountId, endpoint } = await accountWithEndpoint();
        const stamps = await store.appendEvents([eventFixture(endpoint), eventFixture(endpoint)], clock);
        const purged = await store.purgeEvents(stamps[1]!.receivedAt + 1, 12345);
        expect(purged).toBe(2);
        const e = await store.getEndpoint(endpoint.id, accountId);
        expect(e?.purgedEventCount).toBe(2);
        expect(e?.eventCount).toBe(0);
        expect(e?.lastPurgedAt).toBe(12345);
        expect((await store.listEvents(query(accountId, endpoint.id))).events).toEqual([]);
        expect((await store.listEvents(query(accountId, endpoint.id, { searchTokens: [token("hello")] }))).events).toEqual([]);
      });
    });

    describe("paging properties", () => {
      // Many events share a millisecond (the clock often stands still), and new events keep
      // arriving between pages: backward paging must return exactly the events that existed
      // when it started, forward polling exactly the ones that arrived after, none twice.
      it("never skips nor repeats, while inserting between pages", async () => {
        await fc.assert(
          fc.asyncProperty(
            fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 60 }),
            fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 8 }),
            fc.integer({ min: 1, max: 7 }),
            async (clockSteps, insertsBetweenPages, limit) => {
              const { accountId, endpoint } = await accountWithEndpoint();
              let time = 1_800_000_000_000;
              let step = 0;
              const stamped = () => (time += clockSteps[step++ % clockSteps.length]!);
              const initial = await store.appendEvents(
                clockSteps.map(() => eventFixture(endpoint)),
                stamped,
              );
              const newestAtStart = initial[initial.length - 1]!;

              const backward: string[] = [];
              let cursor: { receivedAt: number; id: string } | undefined;
              let round = 0;
              for (;;) {
                const page = await store.listEvents(query(accountId, endpoint.id, { limit, before: cursor }));
                if (cursor === undefined) {
                  // The first page starts at the newest event, including any inserted below.
                  backward.push(...page.events.filter((e) => e.id <= newestAtStart.id).map((e) => e.id));
                } else {
                  backward.push(...page.events.map((e) => e.id));
                }
                const n = insertsBetweenPages[round++ % insertsBetweenPages.length]!;
                await store.appendEvents(Array.from({ length: n }, () => eventFixture(endpoint)), stamped);
                if (!page.hasOlder) break;
                const last = page.events[page.events.length - 1]!;
                cursor = { receivedAt: last.receivedAt, id: last.id };
              }
              expect(backward).toEqual(initial.map((s) => s!.id).reverse());

              // Forward: from the newest event at the start, poll with `after` until caught up.
              const forward: string[] = [];
              let after = { receivedAt: newestAtStart.receivedAt, id: newestAtStart.id };
              for (let i = 0; i < 1000; i += 1) {
                const page = await store.listEvents(query(accountId, endpoint.id, { limit, after }));
                if (page.events.length === 0) break;
                forward.push(...[...page.events].reverse().map((e) => e.id));
                const newest = page.events[0]!;
                after = { receivedAt: newest.receivedAt, id: newest.id };
              }
              const all = (await store.listEvents(query(accountId, endpoint.id, { limit: 1000 }))).events.map((e) => e.id);
              const arrivedLater = all.filter((id) => id > newestAtStart.id).reverse();
              expect(forward).toEqual(arrivedLater);
              expect(new Set(forward).size).toBe(forward.length);
            },
          ),
          { numRuns: 25 },
        );
      }, 60_000);

      it("search pages exactly like a brute-force filter, across batches and deletes", async () => {
        const vocabulary = ["alpha", "beta", "gamma", "delta", "eps"];
        await fc.assert(
          fc.asyncProperty(
            fc.array(fc.array(fc.subarray(vocabulary, { minLength: 0, maxLength: 4 }), { minLength: 1, maxLength: 6 }), {
              minLength: 1,
              maxLength: 8,
            }),
            fc.subarray(vocabulary, { minLength: 1, maxLength: 3 }),
            fc.integer({ min: 1, max: 4 }),
            fc.array(fc.nat(), { maxLength: 5 }),
            async (batches, searchWords, limit, deletions) => {
              const { accountId, endpoint } = await accountWithEndpoint();
              const words = new Map<string, string[]>();
              for (const batch of batches) {
                const stamps = await store.appendEvents(batch.map((w) => eventFixture(endpoint, { words: w })), clock);
                stamps.forEach((st, i) => words.set(st!.id, batch[i]!));
              }
              const ids = [...words.keys()];
              for (const d of deletions) {
                const id = ids[d % ids.length]!;
                if (words.delete(id)) await store.deleteEvent(accountId, endpoint.id, id);
              }
              const expected = [...words.entries()]
                .filter(([, w]) => searchWords.every((s) => w.includes(s)))
                .map(([id]) => id)
                .sort()
                .reverse();
              expect(await listAllPages(store, query(accountId, endpoint.id, { limit, searchTokens: searchWords.map(token) }))).toEqual(expected);
              // and forward from the oldest match
              if (expected.length > 1) {
                const oldest = expected[expected.length - 1]!;
                const event = await store.getEvent(accountId, endpoint.id, oldest);
                const page = await store.listEvents(
                  query(accountId, endpoint.id, {
                    limit: 100,
                    after: { receivedAt: event!.receivedAt, id: oldest },
                    searchTokens: searchWords.map(token),
                  }),
                );
                expect(page.events.map((e) => e.id)).toEqual(expected.slice(0, -1));
                expect(page.hasOlder).toBe(true);
              }
            },
          ),
          { numRuns: 40 },
        );
      }, 60_000);

      it("keeps eventCount exact under concurrent appends", async () => {
        const { endpoint } = await accountWithEndpoint();
        await Promise.all(
          Array.from({ length: 20 }, () => store.appendEvents(Array.from({ length: 5 }, () => eventFixture(endpoint)), clock)),
        );
        expect((await store.getEndpoint(endpoint.id))?.eventCount).toBe(100);
      });
    });

    describe("replay allowance and audit", () => {
      it("charges up to the limit per account and day", async () => {
        const results = [];
        for (let i = 0; i < 4; i += 1) results.push(await store.chargeReplay("acct", "2026-01-01", 3));
        expect(results.map((r) => r.allowed)).toEqual([true, true, true, false]);
        expect(results.map((r) => r.used)).toEqual([1, 2, 3, 3]);
        expect(await store.getReplayUsage("acct", "2026-01-01")).toBe(3);
        expect((await store.chargeReplay("acct", "2026-01-02", 3)).used).toBe(1);
        expect((await store.chargeReplay("other", "2026-01-01", 3)).used).toBe(1);
      });

      it("never over-charges under concurrent calls", async () => {
        const results = await Promise.all(Array.from({ length: 20 }, () => store.chargeReplay("acct", "2026-01-01", 7)));
        expect(results.filter((r) => r.allowed)).toHaveLength(7);
        expect(await store.getReplayUsage("acct", "2026-01-01")).toBe(7);
      });

      it("records audit entries", async () => {
        await expect(
          store.recordReplayAudit({
            id: "01a20000-0000-7000-8000-000000000001",
            accountId: "a",
            endpointId: "e",
            eventId: "v",
            keyId: "k",
            targetUrl: "https://example.test/hook",
            mode: "exact",
            result: "delivered",
            targetStatus: 200,
            networkFailureReason: "",
            durationMs: 12,
            createdAt: 1,
            requestId: "r",
            client: "api",
          }),
        ).resolves.toBeUndefined();
      });
    });

    it("answers ping", async () => {
      expect(await store.ping()).toBe(true);
    });
  });
}
