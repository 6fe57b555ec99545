import { describe, it, expect } from "vitest";
import { Query } from "mingo";
import { newId, type ListenerRecord } from "@whc/catalog-core";
import { expiredListenersFilter, listenerDoc, listenerGuard, listenerOf, liveListenersFilter } from "./listeners.js";

/** The listener documents and filters the adapter sends, checked with mingo (no MongoDB here). */
const T0 = 1_900_000_000_000;
const listener = (overrides: Partial<ListenerRecord> = {}): ListenerRecord => ({
  id: newId(),
  accountId: "acct",
  endpointId: "ep",
  host: "laptop",
  startedAt: T0,
  lastSeenAt: T0,
  expiresAt: T0 + 30_000,
  lagEvents: 2,
  lagRunSince: T0,
  ...overrides,
});

describe("listener documents", () => {
  it("read back as the record they were written from, with and without cursor and error", () => {
    const full = listener({ cursor: { receivedAt: T0 - 1, id: newId() }, lastError: "timeout" });
    expect(listenerOf(listenerDoc(full))).toEqual(full);
    const bare = listener();
    expect(listenerOf(listenerDoc(bare))).toEqual(bare);
    expect(listenerDoc(bare)).not.toHaveProperty("cursorAt");
  });

  it("finds the endpoint's live listeners of the account, never a guard, and every expired one", () => {
    const live = listener();
    const expired = listener({ expiresAt: T0 });
    const foreign = listener({ accountId: "other" });
    const elsewhere = listener({ endpointId: "ep2", expiresAt: T0 - 1 });
    const guard = { _id: "guard:ep", guardedAt: T0 };
    expect(listenerGuard("ep", T0).filter).toEqual({ _id: guard._id });
    const docs = [live, expired, foreign, elsewhere].map(listenerDoc).concat([guard as never]);
    const find = (filter: Record<string, unknown>) => new Query(filter).find(docs).all().map((d) => (d as { _id: string })._id);
    expect(find(liveListenersFilter("acct", "ep", T0))).toEqual([listenerDoc(live)._id]);
    expect(find(expiredListenersFilter(T0)).sort()).toEqual([listenerDoc(expired)._id, listenerDoc(elsewhere)._id].sort());
    expect(find({ endpointId: "ep" })).not.toContain(guard._id);
  });
});
