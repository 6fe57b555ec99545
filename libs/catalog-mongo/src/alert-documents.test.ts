import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { Query, updateMany } from "mingo";
import {
  alertClaimHolds,
  claimedAlert,
  isClaimableAlert,
  isOpenForRepeats,
  raisedInto,
  recordedAlert,
  type AlertAttemptResult,
  type AlertChannelRecord,
  type AlertRecord,
} from "@whc/catalog-core";
import { ALERT_STATES } from "@whc/api-model";
import {
  ALERT_CLAIM_ORDER,
  LATEST_ORDER,
  alertClaimFilter,
  alertClaimUpdate,
  alertHeldFilter,
  alertKeyFilter,
  alertRecordUpdate,
  finishedAlertsFilter,
  lastDeliveryUpdate,
  nextAlertDueFilter,
  openForRepeatsFilter,
  repeatUpdate,
} from "./alert-documents.js";
import type { Doc } from "./documents.js";
import { alertChannelDocs, alertDocs, type AnyDoc } from "./records.js";

/*
 * The alert outbox's documents (ADR 0085), evaluated by mingo against catalog-core's reference
 * functions, as delivery-documents.test.ts does for the relay outbox.
 */

const CHANNEL: AlertChannelRecord = {
  id: "ch",
  accountId: "acct",
  name: "ops",
  type: "webhook",
  url: "https://alerts.example.test/",
  events: ["delivery.exhausted"],
  endpointIds: [],
  sealedSecret: new Uint8Array([1, 2]),
  createdAt: 5,
  lastDelivery: undefined,
};

const alert: fc.Arbitrary<AlertRecord> = fc.record({
  id: fc.constant("al"),
  accountId: fc.constant("acct"),
  channelId: fc.constant("ch"),
  type: fc.constantFrom("delivery.exhausted", "signature.failed"),
  endpointId: fc.constantFrom("", "ep"),
  endpointSlug: fc.constantFrom("", "orders"),
  dataJson: fc.constant('{"eventId":"e"}'),
  count: fc.integer({ min: 1, max: 5 }),
  firstAt: fc.integer({ min: 0, max: 5 }),
  lastAt: fc.integer({ min: 5, max: 10 }),
  dueAt: fc.integer({ min: 0, max: 20 }),
  state: fc.constantFrom(...ALERT_STATES),
  nextAttemptAt: fc.option(fc.integer({ min: 0, max: 20 }), { nil: undefined }),
  claimOwner: fc.option(fc.constantFrom("w1", "w2", "$w"), { nil: undefined }),
  claimUntil: fc.option(fc.integer({ min: 0, max: 20 }), { nil: undefined }),
  started: fc.integer({ min: 0, max: 3 }),
  lastAttemptAt: fc.option(fc.integer({ min: 0, max: 20 }), { nil: undefined }),
  lastStatus: fc.constantFrom(0, 200, 503),
  lastError: fc.constantFrom("", "timeout"),
});

const result: fc.Arbitrary<AlertAttemptResult> = fc.record({
  at: fc.integer({ min: 0, max: 30 }),
  status: fc.constantFrom(0, 204, 500),
  error: fc.constantFrom("", "connection_refused"),
  state: fc.constantFrom(...ALERT_STATES),
  nextAttemptAt: fc.option(fc.integer({ min: 0, max: 30 }), { nil: undefined }),
});

/** A deep copy that keeps class instances (Binary) as they are. */
function copy<T>(value: T): T {
  if (Array.isArray(value)) return value.map(copy) as T;
  if (value && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, copy(v)])) as T;
  }
  return value;
}

/** The update applied by mingo to a copy of `doc` where `filter` matches it, read back. */
function applied(doc: AnyDoc, filter: Doc, update: Doc): { doc: AnyDoc; modified: number } {
  const docs: Doc[] = [copy(doc)];
  const { modifiedCount } = updateMany(docs, filter, update as never);
  return { doc: docs[0] as AnyDoc, modified: modifiedCount };
}

const matches = (filter: Doc, doc: AnyDoc) => new Query(filter).test(doc);

describe("alert documents", () => {
  it("read back as the records they were written from", () => {
    fc.assert(
      fc.property(alert, (a) => {
        expect(alertDocs.read(alertDocs.write(a))).toEqual(a);
      }),
    );
    const note = { alertId: "al", type: "test", at: 3, state: "delivered" as const, attempts: 1, status: 204, error: "" };
    expect(alertChannelDocs.read(alertChannelDocs.write({ ...CHANNEL, lastDelivery: note }))).toEqual({ ...CHANNEL, lastDelivery: note });
    const slack = { ...CHANNEL, type: "slack" as const, sealedSecret: undefined };
    expect(alertChannelDocs.read(alertChannelDocs.write(slack))).toEqual(slack);
    expect(alertChannelDocs.write(slack)).not.toHaveProperty("sealedSecret");
  });

  it("claim as isClaimableAlert and claimedAlert say", () => {
    fc.assert(
      fc.property(alert, fc.integer({ min: 0, max: 25 }), (a, now) => {
        const doc = alertDocs.write(a);
        expect(matches(alertClaimFilter(now), doc)).toBe(isClaimableAlert(a, now));
        const { doc: after } = applied(doc, { _id: a.id }, alertClaimUpdate("w1", now, 7));
        expect(alertDocs.read(after)).toEqual(claimedAlert(a, "w1", now, 7));
      }),
    );
  });

  it("record an attempt only under its claim, as alertClaimHolds and recordedAlert say", () => {
    fc.assert(
      fc.property(alert, fc.constantFrom("w1", "w2"), fc.integer({ min: 0, max: 3 }), result, (a, owner, n, r) => {
        const doc = alertDocs.write(a);
        expect(matches(alertHeldFilter(a.id, owner, n), doc)).toBe(alertClaimHolds(a, owner, n));
        const { doc: after, modified } = applied(doc, alertHeldFilter(a.id, owner, n), alertRecordUpdate(r));
        const expected = recordedAlert(a, owner, n, r);
        if (expected) expect(alertDocs.read(after)).toEqual(expected);
        else expect([modified, alertDocs.read(after)]).toEqual([0, a]);
      }),
    );
  });

  it("count a repeat only into an alert not tried yet, as raisedInto merges it", () => {
    fc.assert(
      fc.property(alert, fc.integer({ min: 10, max: 40 }), (a, now) => {
        const doc = alertDocs.write(a);
        expect(matches(openForRepeatsFilter(a.id), doc)).toBe(isOpenForRepeats(a));
        const raised = { accountId: "acct", type: a.type, endpointId: a.endpointId || undefined, data: { eventId: "next" } };
        const next = raisedInto(a, raised, CHANNEL, { now, windowMs: 100, id: "new", endpointSlug: "orders" });
        const { doc: after, modified } = applied(doc, openForRepeatsFilter(a.id), repeatUpdate(next.alert));
        if (next.kind === "merge") expect(alertDocs.read(after)).toEqual(next.alert);
        else expect([modified, next.alert.dueAt]).toEqual([0, Math.max(now, a.dueAt + 100)]);
      }),
    );
  });

  it("find a key's newest alert, the next due one, and the finished ones a purge removes", () => {
    const base = { accountId: "acct", channelId: "ch", type: "delivery.exhausted", endpointId: "ep", endpointSlug: "", dataJson: "{}", count: 1, firstAt: 0, lastAt: 0, started: 1, lastStatus: 0, lastError: "" };
    const docs = [
      alertDocs.write({ ...base, id: "a1", dueAt: 10, state: "delivered" }),
      alertDocs.write({ ...base, id: "a2", dueAt: 30, state: "pending", nextAttemptAt: 30 }),
      alertDocs.write({ ...base, id: "a3", dueAt: 20, state: "failed" }),
      alertDocs.write({ ...base, id: "a4", dueAt: 40, state: "pending", nextAttemptAt: 45, endpointId: "" }),
      alertDocs.write({ ...base, id: "a5", dueAt: 50, state: "pending", nextAttemptAt: 25, type: "test" }),
    ];
    const ids = (filter: Doc, sort: Record<string, 1 | -1>) => new Query(filter).find<AnyDoc>(docs).sort(sort).all().map((d) => d._id);
    expect(ids(alertKeyFilter("ch", "delivery.exhausted", "ep"), LATEST_ORDER)[0]).toBe("a2");
    expect(ids(alertKeyFilter("ch", "delivery.exhausted", ""), LATEST_ORDER)).toEqual(["a4"]);
    expect(ids(nextAlertDueFilter(25), ALERT_CLAIM_ORDER)).toEqual(["a2", "a4"]);
    expect(ids(finishedAlertsFilter(20), ALERT_CLAIM_ORDER)).toEqual(["a1"]);
    const channel = applied(alertChannelDocs.write(CHANNEL), { _id: "ch" }, lastDeliveryUpdate({ alertId: "a2", type: "t", at: 1, state: "pending", attempts: 1, status: 0, error: "timeout" }));
    expect(alertChannelDocs.read(channel.doc).lastDelivery).toMatchObject({ alertId: "a2", error: "timeout" });
  });
});
