import { describe, it, expect } from "vitest";
import { Query } from "mingo";
import { newId, type AuditRecord } from "@whc/catalog-core";
import { auditFixture } from "@whc/catalog-core/testing";
import { AUDIT_NEWEST_FIRST, AUDIT_OLDEST_FIRST, auditPageFilter } from "./audit.js";
import { auditLogDocs } from "./records.js";

/** The audit log's documents and page filters, checked with mingo (no MongoDB on the build machines). */
const T0 = 1_900_000_000_000;

describe("audit log documents", () => {
  it("read back as written, an entry about no endpoint or event without those fields", () => {
    const full = auditFixture("acct", { endpointId: newId(), eventId: newId(), details: { unmasked: true } });
    expect(auditLogDocs.read(auditLogDocs.write(full))).toEqual(full);
    const bare = auditFixture("acct", { action: "key.created", details: { id: newId() } });
    const doc = auditLogDocs.write(bare);
    expect(doc).not.toHaveProperty("endpointId");
    expect(doc).not.toHaveProperty("eventId");
    expect(auditLogDocs.read(doc)).toEqual(bare);
  });

  it("pages newest first by (at, id) between cursors, with every filter, one account's only", () => {
    const key = newId();
    const endpoint = newId();
    const event = newId();
    const entries: AuditRecord[] = Array.from({ length: 10 }, (_, i) =>
      auditFixture("acct", {
        id: newId(),
        at: T0 + (i < 4 ? 0 : i),
        action: i % 2 === 0 ? "event.read" : "endpoint.updated",
        keyId: i % 3 === 0 ? key : newId(),
        endpointId: i % 4 === 0 ? endpoint : undefined,
        eventId: i === 4 || i === 8 ? event : undefined,
      }),
    );
    const docs = [...entries, auditFixture("other", { at: T0 })].map((e) => auditLogDocs.write(e));
    const find = (q: Parameters<typeof auditPageFilter>[0], sort: Record<string, 1 | -1> = AUDIT_NEWEST_FIRST) =>
      new Query(auditPageFilter(q)).find(docs).sort(sort).all().map((d) => (d as { _id: string })._id);
    const newestFirst = [...entries].sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : -1)).map((e) => e.id);

    expect(find({ accountId: "acct" })).toEqual(newestFirst);
    const at = (id: string) => entries.find((e) => e.id === id)!.at;
    const cursor = (id: string) => ({ at: at(id), id });
    expect(find({ accountId: "acct", before: cursor(newestFirst[6]!) })).toEqual(newestFirst.slice(7));
    expect(find({ accountId: "acct", after: cursor(newestFirst[8]!) }, AUDIT_OLDEST_FIRST)).toEqual(newestFirst.slice(0, 8).reverse());
    expect(find({ accountId: "acct", after: cursor(newestFirst[8]!), before: cursor(newestFirst[2]!) })).toEqual(newestFirst.slice(3, 8));
    const expected = (keep: (e: AuditRecord) => boolean) => newestFirst.filter((id) => keep(entries.find((e) => e.id === id)!));
    expect(find({ accountId: "acct", action: "event.read" })).toEqual(expected((e) => e.action === "event.read"));
    expect(find({ accountId: "acct", keyId: key })).toEqual(expected((e) => e.keyId === key));
    expect(find({ accountId: "acct", endpointId: endpoint })).toEqual(expected((e) => e.endpointId === endpoint));
    expect(find({ accountId: "acct", endpointId: endpoint, eventId: event })).toEqual(expected((e) => e.eventId === event));
    expect(find({ accountId: "acct", endpointId: endpoint, eventId: event })).toHaveLength(2);
    expect(find({ accountId: "acct", fromMs: T0 + 5, toMs: T0 + 8 })).toEqual(expected((e) => e.at >= T0 + 5 && e.at < T0 + 8));
  });
});
