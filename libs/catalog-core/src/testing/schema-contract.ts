import { describe, it, expect } from "vitest";
import { SCHEMA_LIMITS, TYPE_BIT, encodeBodyShape, type JsonType } from "@whc/api-model";
import type { EndpointRecord, SchemaObservation } from "../types.js";
import { newId } from "../ids.js";
import type { ContractContext } from "./endpoint-contract.js";
import { eventFixture } from "./fixtures.js";

const HOUR = 3_600_000;

/** A shape as ingest encodes it, from path -> types. */
export function shapeText(paths: Record<string, JsonType | JsonType[]>, partial = false): string {
  const masks = new Map<string, number>();
  for (const [path, types] of Object.entries(paths)) masks.set(path, (Array.isArray(types) ? types : [types]).reduce((m, t) => m | TYPE_BIT[t], 0));
  return encodeBodyShape({ paths: masks, partial });
}

/** A Stripe-like invoice event's shape. */
export const INVOICE: Record<string, JsonType | JsonType[]> = {
  id: "string",
  type: "string",
  created: "integer",
  data: "object",
  "data.object": "object",
  "data.object.amount": "integer",
  "data.object.currency": "string",
  "data.object.lines": "array",
  "data.object.lines[]": "object",
  "data.object.lines[].id": "string",
};

/**
 * Schemas and drift (design §19; ADR 0090): learnSchemas judges each observation against what
 * was learned before it and stores drift on its event; schemas are per endpoint and event type,
 * isolated between accounts, bounded, and gone with their endpoint.
 */
export function schemaContract(ctx: ContractContext): void {
  describe("schemas and drift", () => {
    /** Appends `n` events and answers observations of them with the given shapes. */
    async function captures(endpoint: EndpointRecord, shapes: string[], eventType = "invoice.paid"): Promise<SchemaObservation[]> {
      const stored = await ctx.store().appendEvents(
        shapes.map(() => eventFixture(endpoint, { canonicalEventType: eventType })),
        ctx.clock(),
      );
      return stored.map((s, i) => ({
        accountId: endpoint.accountId,
        endpointId: endpoint.id,
        eventType,
        eventId: s!.id,
        receivedAt: s!.receivedAt,
        shape: shapes[i]!,
      }));
    }

    it("learns paths, types and presence; flags an added, a missing and a retyped path after 20 samples", async () => {
      const { accountId, endpoint } = await ctx.accountWithEndpoint();
      const usual = shapeText(INVOICE);
      const early = await captures(endpoint, [...Array(19).fill(usual), shapeText({ ...INVOICE, extra: "string" })]);
      expect(await ctx.store().learnSchemas(early, HOUR)).toEqual([]);
      // The 20th sample was not judged: fewer than 20 came before it.
      expect((await ctx.store().getEvent(accountId, endpoint.id, early[19]!.eventId))?.schemaDrift).toBeUndefined();
      const more = await captures(endpoint, Array(5).fill(usual));
      await ctx.store().learnSchemas(more, HOUR);

      const missing = Object.fromEntries(Object.entries(INVOICE).filter(([p]) => p !== "data.object.currency"));
      const drifted = await captures(endpoint, [
        shapeText({ ...INVOICE, "data.object.tax": "object", "data.object.tax.rate": "number" }),
        shapeText(missing),
        shapeText({ ...INVOICE, "data.object.amount": "string" }),
        usual,
      ]);
      const notices = await ctx.store().learnSchemas(drifted, HOUR);
      const driftOf = async (o: SchemaObservation) => (await ctx.store().getEvent(accountId, endpoint.id, o.eventId))?.schemaDrift;
      expect(await driftOf(drifted[0]!)).toEqual([{ path: "data.object.tax", change: "added", seen: [], now: "object" }]);
      expect(await driftOf(drifted[1]!)).toEqual([{ path: "data.object.currency", change: "missing", seen: ["string"], now: "absent" }]);
      expect(await driftOf(drifted[2]!)).toEqual([{ path: "data.object.amount", change: "type_changed", seen: ["integer"], now: "string" }]);
      expect(await driftOf(drifted[3]!)).toBeUndefined();
      // One notice for the type within the hour: the first drifted capture, counting itself.
      expect(notices).toEqual([
        { accountId, endpointId: endpoint.id, eventType: "invoice.paid", eventId: drifted[0]!.eventId, changes: [expect.objectContaining({ change: "added" })], count: 1 },
      ]);

      const schema = (await ctx.store().getSchema(accountId, endpoint.id, "invoice.paid"))!;
      expect(schema.samples).toBe(29);
      expect(schema.firstSeenAt).toBe(early[0]!.receivedAt);
      expect(schema.lastSeenAt).toBe(drifted[3]!.receivedAt);
      const byPath = new Map(schema.paths.map((p) => [p.path, p]));
      expect(schema.paths[0]?.path).toBe("id");
      expect(byPath.get("data.object.currency")?.present).toBe(28);
      expect(byPath.get("data.object.amount")?.mask).toBe(TYPE_BIT.integer | TYPE_BIT.string);
      expect(byPath.get("extra")?.present).toBe(1);
      expect(byPath.get("data.object.tax.rate")?.mask).toBe(TYPE_BIT.number);

      // The list filter: only the drifted three, or all but them.
      const page = await ctx.store().listEvents({ accountId, endpointId: endpoint.id, limit: 50, schemaDrift: true });
      expect(page.events.map((e) => e.id).sort()).toEqual(drifted.slice(0, 3).map((o) => o.eventId).sort());
      const clean = await ctx.store().listEvents({ accountId, endpointId: endpoint.id, limit: 50, schemaDrift: false });
      expect(clean.events).toHaveLength(26);
    });

    it("raises one notice per type per interval, counting the drifted captures since the last", async () => {
      const { endpoint } = await ctx.accountWithEndpoint();
      await ctx.store().learnSchemas(await captures(endpoint, Array(20).fill(shapeText(INVOICE))), HOUR);
      const odd = shapeText({ ...INVOICE, odd: "boolean" });
      const first = await captures(endpoint, [odd]);
      expect(await ctx.store().learnSchemas(first, HOUR)).toHaveLength(1);
      const next = await captures(endpoint, [shapeText({ ...INVOICE, odd: "boolean", more: "null" }), shapeText({ ...INVOICE, odd: "boolean", again: "null" })]);
      expect(await ctx.store().learnSchemas(next, HOUR)).toEqual([]);
      // With a shorter interval the next drift is due, with the two since counted, itself the third.
      const later = await captures(endpoint, [shapeText({ ...INVOICE, odd: "boolean", last: "null" })]);
      const notices = await ctx.store().learnSchemas(later, 0);
      expect(notices.map((n) => [n.eventId, n.count])).toEqual([[later[0]!.eventId, 3]]);
    });

    it("keeps each endpoint's and each type's schema apart, and another account sees none", async () => {
      const a = await ctx.accountWithEndpoint();
      const b = await ctx.accountWithEndpoint();
      await ctx.store().learnSchemas(await captures(a.endpoint, [shapeText({ x: "string" })], "a.type"), HOUR);
      await ctx.store().learnSchemas(await captures(a.endpoint, [shapeText({ y: "integer" })], "*"), HOUR);
      await ctx.store().learnSchemas(await captures(b.endpoint, [shapeText({ z: "null" })], "a.type"), HOUR);
      const mine = await ctx.store().listSchemas(a.accountId, a.endpoint.id);
      expect(mine.map((s) => [s.eventType, s.paths.map((p) => p.path)])).toEqual([
        ["*", ["y"]],
        ["a.type", ["x"]],
      ]);
      expect(await ctx.store().listSchemas(b.accountId, a.endpoint.id)).toEqual([]);
      expect(await ctx.store().getSchema(b.accountId, a.endpoint.id, "a.type")).toBeUndefined();
      expect((await ctx.store().getSchema(b.accountId, b.endpoint.id, "a.type"))?.paths.map((p) => p.path)).toEqual(["z"]);
      // An observation claiming another account's endpoint is not learned.
      const forged = (await captures(a.endpoint, [shapeText({ forged: "string" })], "a.type")).map((o) => ({ ...o, accountId: b.accountId }));
      await ctx.store().learnSchemas(forged, HOUR);
      expect((await ctx.store().getSchema(a.accountId, a.endpoint.id, "a.type"))?.samples).toBe(1);
    });

    it("learns at most the types and paths allowed, and nothing for an endpoint that is gone", async () => {
      const { accountId, endpoint } = await ctx.accountWithEndpoint();
      const wide = Object.fromEntries(Array.from({ length: SCHEMA_LIMITS.pathsPerType + 1 }, (_, i) => [`f${i}`, "integer" as const]));
      await ctx.store().learnSchemas(await captures(endpoint, [shapeText(wide)]), HOUR);
      const schema = (await ctx.store().getSchema(accountId, endpoint.id, "invoice.paid"))!;
      expect(schema.paths).toHaveLength(SCHEMA_LIMITS.pathsPerType);
      expect(schema.paths.some((p) => p.path === `f${SCHEMA_LIMITS.pathsPerType}`)).toBe(false);

      const types = Array.from({ length: SCHEMA_LIMITS.typesPerEndpoint }, (_, i) => `t${i}`);
      for (const t of types.slice(1)) await ctx.store().learnSchemas(await captures(endpoint, [shapeText({ a: "string" })], t), HOUR);
      await ctx.store().learnSchemas(await captures(endpoint, [shapeText({ a: "string" })], "one.too.many"), HOUR);
      const all = await ctx.store().listSchemas(accountId, endpoint.id);
      expect(all).toHaveLength(SCHEMA_LIMITS.typesPerEndpoint);
      expect(all.some((s) => s.eventType === "one.too.many")).toBe(false);

      const gone = await captures(endpoint, [shapeText({ a: "string" })], "late.type");
      expect(await ctx.store().deleteEndpoint(accountId, endpoint.id)).toBe(true);
      expect(await ctx.store().learnSchemas(gone, HOUR)).toEqual([]);
      expect(await ctx.store().listSchemas(accountId, endpoint.id)).toEqual([]);
      expect(await ctx.store().learnSchemas([{ ...gone[0]!, endpointId: newId() }], HOUR)).toEqual([]);
    });
  });
}
