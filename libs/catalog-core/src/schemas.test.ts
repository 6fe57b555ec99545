import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { encodeBodyShape, TYPE_BIT } from "@whc/api-model";
import { learnGroup, newSchema, observe, openSchema } from "./schemas.js";
import type { SchemaObservation, SchemaRecord } from "./types.js";

/*
 * learnGroup learns a run of captures that repeat a shape judged without drift as one (a pass
 * over the shape's paths per run, not per capture). What it learns and which captures drift
 * must be what judging and learning each capture in turn gives (`observe`, one at a time).
 */

const HOUR = 3_600_000;
const ENDPOINT = "0190a5d3-7c1e-7a00-8000-000000000001";

/** Shapes of one event type: some lack a usual path, change a type, or stop partway. */
const SHAPES = [
  { paths: { id: "string", amount: "integer", "data.object": "object" }, partial: false },
  { paths: { id: "string", "data.object": "object" }, partial: false },
  { paths: { id: "string", amount: "number", "data.object": "object" }, partial: false },
  { paths: { id: "string", amount: "integer", "data.object": "object", extra: "boolean" }, partial: false },
  { paths: { id: "string" }, partial: true },
  { paths: { id: "string", amount: "integer", "data.object": "object", "items[]": "string" }, partial: false },
].map(({ paths, partial }) =>
  encodeBodyShape({ paths: new Map(Object.entries(paths).map(([p, t]) => [p, TYPE_BIT[t as keyof typeof TYPE_BIT]])), partial }),
);

const observation = (shape: string, i: number, receivedAt: number): SchemaObservation => ({
  accountId: "acct_1",
  endpointId: ENDPOINT,
  eventType: "invoice.paid",
  eventId: `evt_${i}`,
  receivedAt,
  shape,
});

/** The reference: every capture judged and learned in turn. */
function oneByOne(stored: SchemaRecord | undefined, group: readonly SchemaObservation[]) {
  const schema = openSchema(stored ?? newSchema(group[0]!));
  const drifts: { eventId: string; changes: unknown[] }[] = [];
  const notices: unknown[] = [];
  for (const o of group) {
    const seen = observe(schema, o, HOUR);
    if (!seen) continue;
    if (seen.drift.length > 0) drifts.push({ eventId: o.eventId, changes: seen.drift });
    if (seen.notice) notices.push(seen.notice);
  }
  return { schema: schema.record, drifts, notices };
}

describe("learning a group of captures (design §19)", () => {
  it("learns runs of a repeated shape exactly as it learns each capture in turn", () => {
    // Mostly the first shape, in runs, with the others between; learned in one or two calls.
    const shapeIndex = fc.oneof({ weight: 6, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: SHAPES.length - 1 }) });
    const run = fc.record({ shape: shapeIndex, length: fc.integer({ min: 1, max: 40 }) });
    fc.assert(
      fc.property(fc.array(run, { minLength: 1, maxLength: 30 }), fc.integer({ min: 0, max: 400 }), fc.array(fc.integer({ min: -5, max: 50 }), { minLength: 1 }), (runs, cut, steps) => {
        let at = 1_700_000_000_000;
        const group = runs
          .flatMap((r) => Array.from({ length: r.length }, () => SHAPES[r.shape]!))
          .map((shape, i) => observation(shape, i, (at += steps[i % steps.length]!)));
        const [first, second] = [group.slice(0, cut), group.slice(cut)];
        const stored = first.length > 0 ? learnGroup(undefined, first, HOUR) : undefined;
        const reference = first.length > 0 ? oneByOne(undefined, first) : undefined;
        expect(stored).toEqual(reference);
        if (second.length === 0) return;
        expect(learnGroup(stored?.schema, second, HOUR)).toEqual(oneByOne(reference?.schema, second));
      }),
      { numRuns: 300 },
    );
  });

  it("still reports a usual path missing from every capture of a run, while it stays usual", () => {
    const full = Array.from({ length: 200 }, (_, i) => observation(SHAPES[0]!, i, 1_700_000_000_000 + i));
    const lacking = Array.from({ length: 5 }, (_, i) => observation(SHAPES[1]!, 200 + i, 1_700_000_001_000 + i));
    const learned = learnGroup(undefined, [...full, ...lacking], HOUR);
    // Every sample had \`amount\` when the first capture lacking it came; then 200 of 201 (99.5 %),
    // 200 of 202 (99.0 %), then under 99 %: no longer usual, no longer missing.
    expect(learned.drifts.map((d) => d.eventId)).toEqual(["evt_200", "evt_201", "evt_202"]);
    expect(learned.schema.samples).toBe(205);
  });
});
