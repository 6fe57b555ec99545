import { describe, it, expect } from "vitest";
import { AppError } from "@whc/errors";
import type { CatalogStore } from "../ports.js";
import type { AlertChannelRecord, AlertClaim, RaisedAlert } from "../types.js";
import { newId } from "../ids.js";
import type { ContractContext } from "./endpoint-contract.js";
import { auditFixture } from "./fixtures.js";

const T0 = 1_900_000_000_000;
const WINDOW = 600_000;

function channel(accountId: string, overrides: Partial<AlertChannelRecord> = {}): AlertChannelRecord {
  return {
    id: newId(),
    accountId,
    name: `ops-${newId().slice(-8)}`,
    type: "webhook",
    url: "https://alerts.example.test/hook",
    events: ["delivery.exhausted", "signature.failed"],
    endpointIds: [],
    sealedSecret: new Uint8Array([1, 2, 3]),
    createdAt: T0,
    lastDelivery: undefined,
    ...overrides,
  };
}

async function refusal(work: Promise<unknown>): Promise<AppError> {
  try {
    await work;
  } catch (err) {
    if (AppError.is(err)) return err;
    throw err;
  }
  throw new Error("not refused");
}

/** Claims everything due at `now` (any account's: other tests' alerts may be due too) and keeps the given channels' claims. */
async function claimsOf(store: CatalogStore, channelIds: string[], now: number, owner = "w1"): Promise<AlertClaim[]> {
  const all = await store.claimAlerts(owner, now, 30_000, 500);
  return all.filter((c) => channelIds.includes(c.channel.id));
}

/**
 * Alert channels and the alert outbox (design §18; ADRs 0085, 0086): channels per account with
 * their limit and unique names; occurrences given to the channels that want them and coalesced
 * per channel, type and endpoint; claims and attempts as the relay outbox's.
 */
export function alertContract(ctx: ContractContext): void {
  describe("alert channels and the alert outbox", () => {
    it("creates, lists oldest first per account with the sealed secret, and deletes once, each with its audit entry", async () => {
      const store = ctx.store();
      const { accountId } = await ctx.accountWithEndpoint();
      const other = await ctx.accountWithEndpoint();
      const later = channel(accountId, { createdAt: T0 + 5, name: "later" });
      const earlier = channel(accountId, { createdAt: T0, name: "earlier", type: "slack", sealedSecret: undefined, endpointIds: [newId()] });
      await store.createAlertChannel(later, 20, auditFixture(accountId, { action: "alert_channel.created", at: T0 }));
      await store.createAlertChannel(earlier, 20);
      await store.createAlertChannel(channel(other.accountId, { name: "later" }), 20);
      const listed = await store.listAlertChannels(accountId);
      expect(listed.map((c) => c.name)).toEqual(["earlier", "later"]);
      expect({ ...listed[1]!, sealedSecret: [...listed[1]!.sealedSecret!] }).toEqual({ ...later, sealedSecret: [1, 2, 3] });
      expect(listed[0]).toMatchObject({ type: "slack", sealedSecret: undefined, endpointIds: earlier.endpointIds, lastDelivery: undefined });

      expect(await store.deleteAlertChannel(other.accountId, later.id, auditFixture(other.accountId, { action: "alert_channel.deleted" }))).toBe(false);
      expect(await store.deleteAlertChannel(accountId, later.id, auditFixture(accountId, { action: "alert_channel.deleted", at: T0 + 1 }))).toBe(true);
      expect(await store.deleteAlertChannel(accountId, later.id, auditFixture(accountId, { action: "alert_channel.deleted", at: T0 + 2 }))).toBe(false);
      expect((await store.listAlertChannels(accountId)).map((c) => c.name)).toEqual(["earlier"]);
      const entries = (await store.listAudit({ accountId, limit: 10 })).entries.map((e) => [e.action, e.at]);
      expect(entries).toEqual([
        ["alert_channel.deleted", T0 + 1],
        ["alert_channel.created", T0],
      ]);
      expect((await store.listAudit({ accountId: other.accountId, limit: 10 })).entries).toEqual([]);
    });

    it("refuses a channel past the account's limit and a name the account uses, writing nothing", async () => {
      const store = ctx.store();
      const { accountId } = await ctx.accountWithEndpoint();
      const other = await ctx.accountWithEndpoint();
      await store.createAlertChannel(channel(accountId, { name: "one" }), 2);
      const taken = await refusal(store.createAlertChannel(channel(accountId, { name: "one" }), 2, auditFixture(accountId, { action: "alert_channel.created" })));
      expect([taken.reason, taken.field]).toEqual(["conflict", "name"]);
      await store.createAlertChannel(channel(other.accountId, { name: "one" }), 2);
      await store.createAlertChannel(channel(accountId, { name: "two" }), 2);
      const full = await refusal(store.createAlertChannel(channel(accountId, { name: "three" }), 2, auditFixture(accountId, { action: "alert_channel.created" })));
      expect([full.reason, full.meta]).toEqual(["quota_exceeded", { quota: "alert_channels", limit: 2 }]);
      expect((await store.listAlertChannels(accountId)).map((c) => c.name)).toEqual(["one", "two"]);
      expect((await store.listAudit({ accountId, limit: 10 })).entries).toEqual([]);
    });

    it("gives an occurrence to the channels that name its type and see its endpoint, with the endpoint's slug; a test only to its channel", async () => {
      const store = ctx.store();
      const { accountId, endpoint } = await ctx.accountWithEndpoint();
      const elsewhere = newId();
      const all = channel(accountId);
      const onlyHere = channel(accountId, { endpointIds: [endpoint.id] });
      const onlyElsewhere = channel(accountId, { endpointIds: [elsewhere] });
      const otherType = channel(accountId, { events: ["listener.stalled"] });
      for (const c of [all, onlyHere, onlyElsewhere, otherType]) await store.createAlertChannel(c, 20);
      const ids = [all, onlyHere, onlyElsewhere, otherType].map((c) => c.id);

      const raised: RaisedAlert = { accountId, type: "signature.failed", endpointId: endpoint.id, data: { eventId: "e1", reason: "signature_mismatch" } };
      expect(await store.raiseAlerts([{ ...raised, accountId: "another-account" }], T0, WINDOW)).toEqual([]);
      const alertIds = await store.raiseAlerts([raised], T0, WINDOW);
      expect(alertIds).toHaveLength(2);
      const claims = await claimsOf(store, ids, T0);
      expect(claims.map((c) => c.channel.id).sort()).toEqual([all.id, onlyHere.id].sort());
      expect(claims.map((c) => c.alert.id).sort()).toEqual([...alertIds].sort());
      for (const c of claims) {
        expect(c.alert).toMatchObject({ type: "signature.failed", endpointId: endpoint.id, endpointSlug: endpoint.slug, count: 1, firstAt: T0, lastAt: T0, state: "pending" });
        expect(JSON.parse(c.alert.dataJson)).toEqual(raised.data);
        expect(c.attempt).toBe(1);
      }
      expect([...claims[0]!.channel.sealedSecret!]).toEqual([1, 2, 3]);

      const [testId] = await store.raiseAlerts([{ accountId, type: "test", data: { message: "hi" }, channelId: otherType.id }], T0 + 1, WINDOW);
      const tests = await claimsOf(store, ids, T0 + 1);
      expect(tests.map((c) => [c.alert.id, c.channel.id, c.alert.endpointId, c.alert.endpointSlug])).toEqual([[testId, otherType.id, "", ""]]);
    });

    it("coalesces repeats of one type for one endpoint: counted into the alert not yet tried, else one more due when the window ends", async () => {
      const store = ctx.store();
      const { accountId, endpoint } = await ctx.accountWithEndpoint();
      const c = channel(accountId);
      await store.createAlertChannel(c, 20);
      const raised = (n: number): RaisedAlert => ({ accountId, type: "delivery.exhausted", endpointId: endpoint.id, data: { eventId: `e${n}` } });

      const [first] = await store.raiseAlerts([raised(1)], T0, WINDOW);
      expect(await store.raiseAlerts([raised(2)], T0 + 10, WINDOW)).toEqual([first]);
      const [claim] = await claimsOf(store, [c.id], T0 + 20);
      expect(claim!.alert).toMatchObject({ id: first, count: 2, firstAt: T0, lastAt: T0 + 10, dueAt: T0 });
      expect(JSON.parse(claim!.alert.dataJson)).toEqual({ eventId: "e2" });
      const delivered = (alertId: string, at: number) => store.recordAlertAttempt(alertId, "w1", 1, { at, status: 200, error: "", state: "delivered" });
      expect(await delivered(first!, T0 + 25)).toBe(true);

      // Tried: the next repeats wait for the window's end, as one alert.
      const [second] = await store.raiseAlerts([raised(3)], T0 + 30, WINDOW);
      expect(second).not.toBe(first);
      expect(await store.raiseAlerts([raised(4), raised(5)], T0 + 40, WINDOW)).toEqual([second]);
      // Another type, or another endpoint, is a key of its own: due at once.
      const [stalled] = await store.raiseAlerts([{ ...raised(6), type: "signature.failed" }], T0 + 50, WINDOW);
      expect((await claimsOf(store, [c.id], T0 + WINDOW - 1)).map((x) => x.alert.id)).toEqual([stalled]);
      await delivered(stalled!, T0 + WINDOW - 1);
      expect(await store.nextAlertDueAt(T0 + WINDOW - 1)).toBe(T0 + WINDOW);
      const [late] = await claimsOf(store, [c.id], T0 + WINDOW);
      expect(late!.alert).toMatchObject({ id: second, count: 3, firstAt: T0 + 30, lastAt: T0 + 40, dueAt: T0 + WINDOW });
      await delivered(second!, T0 + WINDOW);

      // Long after the last window: due at once again.
      const [fresh] = await store.raiseAlerts([raised(7)], T0 + 10 * WINDOW, WINDOW);
      expect((await claimsOf(store, [c.id], T0 + 10 * WINDOW)).map((x) => [x.alert.id, x.alert.dueAt])).toEqual([[fresh, T0 + 10 * WINDOW]]);
      // Tests are never coalesced.
      const tests = await store.raiseAlerts([{ accountId, type: "test", data: {}, channelId: c.id }, { accountId, type: "test", data: {}, channelId: c.id }], T0 + 10 * WINDOW, WINDOW);
      expect(new Set(tests).size).toBe(2);
    });

    it("claims each due alert once with the next attempt number, records only under the claim, and keeps the channel's last delivery", async () => {
      const store = ctx.store();
      const { accountId, endpoint } = await ctx.accountWithEndpoint();
      const c = channel(accountId);
      await store.createAlertChannel(c, 20);
      const [id] = await store.raiseAlerts([{ accountId, type: "delivery.exhausted", endpointId: endpoint.id, data: {} }], T0, WINDOW);

      const [claim] = await claimsOf(store, [c.id], T0, "w1");
      expect(claim!.attempt).toBe(1);
      expect(await claimsOf(store, [c.id], T0 + 1, "w2")).toEqual([]);
      const retry = { at: T0 + 2, status: 503, error: "", state: "pending" as const, nextAttemptAt: T0 + 100 };
      expect(await store.recordAlertAttempt(id!, "w2", 1, retry)).toBe(false);
      expect(await store.recordAlertAttempt(id!, "w1", 2, retry)).toBe(false);
      expect(await store.recordAlertAttempt(id!, "w1", 1, retry)).toBe(true);
      expect(await store.recordAlertAttempt(id!, "w1", 1, retry)).toBe(false);
      expect((await store.listAlertChannels(accountId))[0]!.lastDelivery).toEqual({
        alertId: id,
        type: "delivery.exhausted",
        at: T0 + 2,
        state: "pending",
        attempts: 1,
        status: 503,
        error: "",
      });
      expect(await claimsOf(store, [c.id], T0 + 99)).toEqual([]);
      expect(await store.nextAlertDueAt(T0 + 99)).toBe(T0 + 100);

      // A claim that lapses is taken again with the next number; the lapsed one records nothing.
      const [second] = await claimsOf(store, [c.id], T0 + 100, "w1");
      expect(second!.attempt).toBe(2);
      const [third] = await claimsOf(store, [c.id], T0 + 100 + 30_000, "w2");
      expect(third!.attempt).toBe(3);
      expect(await store.recordAlertAttempt(id!, "w1", 2, { at: T0 + 101, status: 200, error: "", state: "delivered" })).toBe(false);
      expect(await store.recordAlertAttempt(id!, "w2", 3, { at: T0 + 30_200, status: 0, error: "connection_refused", state: "exhausted" })).toBe(true);
      expect((await store.listAlertChannels(accountId))[0]!.lastDelivery).toMatchObject({ state: "exhausted", attempts: 3, status: 0, error: "connection_refused" });
      expect(await claimsOf(store, [c.id], T0 + 10 * WINDOW)).toEqual([]);
    });

    it("drops a deleted channel's alerts, and purges finished alerts older than the cutoff", async () => {
      const store = ctx.store();
      const { accountId, endpoint } = await ctx.accountWithEndpoint();
      const gone = channel(accountId);
      const kept = channel(accountId);
      for (const c of [gone, kept]) await store.createAlertChannel(c, 20);
      const raised = { accountId, type: "signature.failed", endpointId: endpoint.id, data: {} };
      await store.raiseAlerts([raised], T0, WINDOW);
      expect(await store.deleteAlertChannel(accountId, gone.id)).toBe(true);
      const [claim] = await claimsOf(store, [gone.id, kept.id], T0);
      expect(claim!.channel.id).toBe(kept.id);
      await store.recordAlertAttempt(claim!.alert.id, "w1", 1, { at: T0, status: 204, error: "", state: "delivered" });
      // Pending alerts are kept whatever their age; a finished one goes once its window started before the cutoff.
      const [pending] = await store.raiseAlerts([{ ...raised, type: "test", channelId: kept.id }], T0, WINDOW);
      expect(await store.purgeAlerts(T0)).toBe(0);
      expect(await store.purgeAlerts(T0 + 1)).toBeGreaterThanOrEqual(1);
      expect((await claimsOf(store, [kept.id], T0 + 1)).map((c) => c.alert.id)).toEqual([pending]);
      // The key's window went with it: the next occurrence is due at once.
      const [next] = await store.raiseAlerts([raised], T0 + 2, WINDOW);
      expect((await claimsOf(store, [kept.id], T0 + 2)).map((c) => c.alert.id)).toEqual([next]);
    });
  });
}
