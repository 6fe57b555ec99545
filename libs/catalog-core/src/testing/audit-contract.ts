import { describe, it, expect } from "vitest";
import { AppError } from "@whc/errors";
import type { AuditQuery, AuditRecord } from "../types.js";
import { newId } from "../ids.js";
import type { ContractContext } from "./endpoint-contract.js";
import { auditFixture, endpointFixture, eventFixture, forwardAttemptFixture, keyHash } from "./fixtures.js";

const T0 = 1_900_000_000_000;

/**
 * The audit log (design §15; ADR 0053): each audited store operation writes its entry only
 * when its action took place, and never when the action fails; entries page newest first by
 * (at, id) with the events' cursors and are filtered, per account; old ones are purged.
 */
export function auditContract(ctx: ContractContext): void {
  describe("audit log", () => {
    const page = (accountId: string, extra: Partial<AuditQuery> = {}) => ctx.store().listAudit({ accountId, limit: 100, ...extra });
    const actions = async (accountId: string) => (await page(accountId)).entries.map((e) => e.action).reverse();

    it("writes each audited action's entry with it, and none when the action did not take place", async () => {
      const store = ctx.store();
      const { accountId, endpoint } = await ctx.accountWithEndpoint();
      const entry = (action: string, extra: Partial<AuditRecord> = {}) => auditFixture(accountId, { action, at: T0, endpointId: endpoint.id, ...extra });
      const unknown = newId();

      const created = await store.createEndpoint(endpointFixture(accountId), undefined, entry("endpoint.created", { details: { slug: "x" } }));
      expect(await store.updateEndpoint(accountId, unknown, { displayName: "n" }, T0, entry("endpoint.updated"))).toBeUndefined();
      await store.updateEndpoint(accountId, endpoint.id, { displayName: "renamed" }, T0, entry("endpoint.updated", { details: { fields: ["displayName"] } }));
      const [stamp] = await store.appendEvents([eventFixture(endpoint)], ctx.clock());
      const eventId = stamp!.id;
      expect(await store.getEvent(accountId, endpoint.id, unknown, T0, entry("event.read", { eventId: unknown }))).toBeUndefined();
      expect((await store.getEvent(accountId, endpoint.id, eventId, T0, entry("event.read", { eventId })))?.readAt).toBe(T0);
      await store.getEvent(accountId, endpoint.id, eventId, undefined, entry("event.curl_exported", { eventId, details: { unmasked: true } }));
      await store.beginForwardAttempt({ accountId, endpointId: endpoint.id, eventId, destinationId: endpoint.id }, "https://app.example.test/");
      await store.recordForwardAttempt({ accountId, endpointId: endpoint.id, eventId, destinationId: endpoint.id }, forwardAttemptFixture(1, { trigger: "manual" }), { kind: "direct" }, entry("event.redelivered", { eventId }));
      await store.recordReplayAudit(
        { id: newId(), accountId, endpointId: endpoint.id, eventId, keyId: "k", targetUrl: "https://x.test/", mode: "exact", result: "delivered", targetStatus: 200, networkFailureReason: "", durationMs: 3, createdAt: T0, requestId: "r", client: "api" },
        entry("event.replayed", { eventId }),
      );
      expect(await store.deleteEvent(accountId, endpoint.id, unknown, entry("event.deleted", { eventId: unknown }))).toBe(false);
      expect(await store.deleteEvent(accountId, endpoint.id, eventId, entry("event.deleted", { eventId }))).toBe(true);
      expect(await store.deleteEndpoint(accountId, unknown, entry("endpoint.deleted", { endpointId: unknown }))).toBe(false);
      expect(await store.deleteEndpoint(accountId, created.id, entry("endpoint.deleted", { endpointId: created.id }))).toBe(true);

      const key = { id: newId(), accountId, name: "ci", prefix: "whc_ci", keyHash: keyHash(`ci-${accountId}`), scopes: ["events:read"], endpointIds: [], createdAt: T0, expiresAt: undefined, lastUsedAt: undefined, revokedAt: undefined };
      await store.createApiKey(key, entry("key.created", { endpointId: undefined, details: { id: key.id } }));
      await store.revokeApiKey(key.id, T0, accountId, entry("key.revoked", { endpointId: undefined }));
      // A second revoke revokes nothing: no second entry.
      await store.revokeApiKey(key.id, T0 + 1, accountId, entry("key.revoked", { endpointId: undefined }));
      await store.recordAudit(entry("events.exported", { details: { count: 1 } }));

      expect(await actions(accountId)).toEqual([
        "endpoint.created",
        "endpoint.updated",
        "event.read",
        "event.curl_exported",
        "event.redelivered",
        "event.replayed",
        "event.deleted",
        "endpoint.deleted",
        "key.created",
        "key.revoked",
        "events.exported",
      ]);
      const [newest] = (await page(accountId, { limit: 1 })).entries;
      expect(newest).toEqual(entry("events.exported", { id: newest!.id, details: { count: 1 } }));
      const read = (await page(accountId, { action: "event.read" })).entries;
      expect(read).toEqual([entry("event.read", { id: read[0]!.id, eventId })]);
      // One event's history: what was done to it, newest first; an event nothing was done to has none.
      const history = (await page(accountId, { endpointId: endpoint.id, eventId })).entries.map((e) => e.action);
      expect(history).toEqual(["event.deleted", "event.replayed", "event.redelivered", "event.curl_exported", "event.read"]);
      expect((await page(accountId, { endpointId: endpoint.id, eventId: unknown })).entries).toEqual([]);
    });

    it("writes no entry when the action fails", async () => {
      const store = ctx.store();
      const name = `acct-${newId()}`;
      const { accountId, endpoint } = await ctx.accountWithEndpoint(name);
      await expect(store.createEndpoint(endpointFixture(accountId, { slug: endpoint.slug }), undefined, auditFixture(accountId, { action: "endpoint.created" }))).rejects.toSatisfy(
        (e: unknown) => AppError.is(e) && e.reason === "slug_taken",
      );
      const key = { id: newId(), accountId, name: "dup", prefix: "p", keyHash: keyHash(name), scopes: ["*"], endpointIds: [], createdAt: T0, expiresAt: undefined, lastUsedAt: undefined, revokedAt: undefined };
      await expect(store.createApiKey(key, auditFixture(accountId, { action: "key.created" }))).rejects.toSatisfy((e: unknown) => AppError.is(e) && e.reason === "conflict");
      expect((await page(accountId)).entries).toEqual([]);
    });

    it("pages newest first by (at, id) with before and after cursors, filtered, one account's only", async () => {
      const store = ctx.store();
      const accountId = `acct-${newId()}`;
      const endpointA = newId();
      const keyA = newId();
      // Five entries share one millisecond: the id orders them.
      const written: AuditRecord[] = [];
      for (let i = 0; i < 12; i += 1) {
        const e = auditFixture(accountId, {
          id: newId(),
          at: T0 + (i < 5 ? 0 : i),
          action: i % 3 === 0 ? "event.read" : "endpoint.updated",
          keyId: i % 2 === 0 ? keyA : newId(),
          endpointId: i % 4 === 0 ? endpointA : newId(),
        });
        written.push(e);
      }
      for (const e of [...written].reverse()) await store.recordAudit(e);
      await store.recordAudit(auditFixture("someone-else", { at: T0 + 3 }));
      const newestFirst = [...written].sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : -1)).map((e) => e.id);

      const first = await page(accountId, { limit: 5 });
      expect(first.entries.map((e) => e.id)).toEqual(newestFirst.slice(0, 5));
      expect(first.hasOlder).toBe(true);
      const last = first.entries.at(-1)!;
      const second = await page(accountId, { limit: 5, before: { at: last.at, id: last.id } });
      expect(second.entries.map((e) => e.id)).toEqual(newestFirst.slice(5, 10));
      const tail = second.entries.at(-1)!;
      const third = await page(accountId, { limit: 5, before: { at: tail.at, id: tail.id } });
      expect(third.entries.map((e) => e.id)).toEqual(newestFirst.slice(10));
      expect(third.hasOlder).toBe(false);
      // `after`: the entries just newer than the cursor, newest first.
      const oldest = written.find((e) => e.id === newestFirst.at(-1))!;
      const after = await page(accountId, { limit: 3, after: { at: oldest.at, id: oldest.id } });
      expect(after.entries.map((e) => e.id)).toEqual(newestFirst.slice(-4, -1));
      expect(after.hasOlder).toBe(true);

      const ids = async (extra: Partial<AuditQuery>) => (await page(accountId, extra)).entries.map((e) => e.id).sort();
      const expected = (keep: (e: AuditRecord) => boolean) => written.filter(keep).map((e) => e.id).sort();
      expect(await ids({ action: "event.read" })).toEqual(expected((e) => e.action === "event.read"));
      expect(await ids({ keyId: keyA })).toEqual(expected((e) => e.keyId === keyA));
      expect(await ids({ endpointId: endpointA, action: "event.read" })).toEqual(expected((e) => e.endpointId === endpointA && e.action === "event.read"));
      expect(await ids({ fromMs: T0 + 6, toMs: T0 + 9 })).toEqual(expected((e) => e.at >= T0 + 6 && e.at < T0 + 9));
      expect((await page("nobody")).entries).toEqual([]);
    });

    it("purges entries older than the cutoff", async () => {
      const store = ctx.store();
      const accountId = `acct-${newId()}`;
      for (const at of [T0 - 2, T0 - 1, T0, T0 + 1]) await store.recordAudit(auditFixture(accountId, { at }));
      expect(await store.purgeAudit(T0)).toBeGreaterThanOrEqual(2);
      expect((await page(accountId)).entries.map((e) => e.at)).toEqual([T0 + 1, T0]);
    });
  });
}
