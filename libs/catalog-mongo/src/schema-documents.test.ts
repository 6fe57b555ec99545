import { describe, it, expect } from "vitest";
import { Query, updateOne } from "mingo";
import { learnGroup, newId, type SchemaObservation, type SchemaRecord } from "@whc/catalog-core";
import { INVOICE, shapeText } from "@whc/catalog-core/testing";
import { SUMMARY_PROJECTION, baseFilter, type Doc } from "./documents.js";
import { driftUpdate, endpointSchemasFilter, schemaDoc, schemaOf, schemaReplaceFilter } from "./schemas.js";
import type { AnyDoc } from "./records.js";

/** The schema documents and filters the adapter sends (design §19), checked with mingo: no MongoDB runs here. */
const T0 = 1_900_000_000_000;
const HOUR = 3_600_000;

function observation(endpointId: string, shape: string, i: number, accountId = "acct"): SchemaObservation {
  return { accountId, endpointId, eventType: "invoice.paid", eventId: newId(), receivedAt: T0 + i, shape };
}

const find = (docs: Doc[], filter: Doc) => new Query(filter).find(docs).all() as Doc[];

describe("schema documents", () => {
  it("read back as the record they were written from, notice time or not", () => {
    const endpointId = newId();
    const learned = learnGroup(undefined, Array.from({ length: 3 }, (_, i) => observation(endpointId, shapeText(INVOICE), i)), HOUR).schema;
    expect(schemaOf(schemaDoc(learned, 1))).toEqual(learned);
    const noticed: SchemaRecord = { ...learned, driftNoticeAt: T0, driftsSinceNotice: 2 };
    expect(schemaOf(schemaDoc(noticed, 4))).toEqual(noticed);
    expect(schemaDoc(learned, 1)).not.toHaveProperty("driftNoticeAt");
    // A value never reaches the document: only paths, type masks and counts.
    expect(JSON.stringify(schemaDoc(learned, 1).paths)).toBe(JSON.stringify(learned.paths.map((p) => ({ p: p.path, m: p.mask, n: p.present }))));
  });

  it("replace only the version read: a second writer from the same version matches nothing, and learns again", () => {
    const endpointId = newId();
    const first = learnGroup(undefined, [observation(endpointId, shapeText(INVOICE), 0)], HOUR).schema;
    const docs: AnyDoc[] = [schemaDoc(first, 1)];
    const read = schemaOf(docs[0]!);
    const a = learnGroup(read, [observation(endpointId, shapeText(INVOICE), 1)], HOUR).schema;
    const b = learnGroup(read, [observation(endpointId, shapeText(INVOICE), 2)], HOUR).schema;
    const { _id, ...replacement } = schemaDoc(a, 2);
    expect(updateOne(docs, schemaReplaceFilter(endpointId, "invoice.paid", 1), { $set: replacement } as never).modifiedCount).toBe(1);
    const { _id: _b, ...late } = schemaDoc(b, 2);
    expect(updateOne(docs, schemaReplaceFilter(endpointId, "invoice.paid", 1), { $set: late } as never).modifiedCount).toBe(0);
    // The loser reads the winner's version and learns its sample on top of it: both count.
    const again = learnGroup(schemaOf(docs[0]!), [observation(endpointId, shapeText(INVOICE), 2)], HOUR).schema;
    expect(again.samples).toBe(3);
    expect(_id).toBe(docs[0]!._id);
  });

  it("find one account's endpoint's schemas only", () => {
    const endpointId = newId();
    const mine = schemaDoc(learnGroup(undefined, [observation(endpointId, shapeText({ a: "string" }), 0)], HOUR).schema, 1);
    const other = schemaDoc(learnGroup(undefined, [observation(newId(), shapeText({ a: "string" }), 0)], HOUR).schema, 1);
    expect(find([mine, other], endpointSchemasFilter("acct", endpointId)).map((d) => d._id)).toEqual([mine._id]);
    expect(find([mine, other], endpointSchemasFilter("someone-else", endpointId))).toEqual([]);
  });

  it("mark a drifted event, which the list filter schemaDrift then finds (and its summary never carries)", () => {
    const endpointId = newId();
    const events: Doc[] = [0, 1, 2].map((i) => ({ _id: `e${i}`, endpointId, accountId: "acct", receivedAt: T0 + i }));
    const changes = [{ path: "data.object.tax", change: "added", seen: [], now: "object" }];
    const { filter, update } = driftUpdate("e1", endpointId, changes);
    expect(updateOne(events, filter, update as never).modifiedCount).toBe(1);
    // Another endpoint's event of the same id is not touched.
    expect(updateOne(events, driftUpdate("e1", newId(), changes).filter, update as never).matchedCount).toBe(0);
    const q = { accountId: "acct", endpointId, limit: 10 };
    expect(find(events, baseFilter({ ...q, schemaDrift: true })).map((d) => d._id)).toEqual(["e1"]);
    expect(find(events, baseFilter({ ...q, schemaDrift: false })).map((d) => d._id)).toEqual(["e0", "e2"]);
    expect(find(events, baseFilter(q))).toHaveLength(3);
    const listed = new Query(baseFilter({ ...q, schemaDrift: true })).find(events, SUMMARY_PROJECTION as never).all()[0];
    expect(listed).not.toHaveProperty("schemaDrift");
  });
});
