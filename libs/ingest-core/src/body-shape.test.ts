import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { decodeBodyShape, SCHEMA_LIMITS, TYPE_BIT, typesOfMask, type JsonType } from "@whc/api-model";
import { bodyShape, bodyShapeText, segmentOf, type ShapeLimits } from "./body-shape.js";

const bytes = (text: string) => Buffer.from(text, "utf8");

function typeOf(v: unknown): JsonType {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v as JsonType;
}

/** The reference: the same paths read off JSON.parse's value (no limit reached). */
function reference(text: string): Map<string, number> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const out = new Map<string, number>();
  const visit = (v: unknown, path: string) => {
    out.set(path, (out.get(path) ?? 0) | TYPE_BIT[typeOf(v)]);
    if (Array.isArray(v)) for (const item of v) visit(item, `${path}[]`);
    else if (typeof v === "object" && v !== null) for (const [k, child] of Object.entries(v)) visit(child, `${path}.${segmentOf(k)}`);
  };
  for (const [k, child] of Object.entries(value)) visit(child, segmentOf(k));
  return out;
}

const sorted = (m: Map<string, number> | undefined) => (m ? [...m].sort(([a], [b]) => (a < b ? -1 : 1)) : undefined);

const KEYS = ["id", "amount", "data", "object", "items", "ünï", 'q"t', "2024-01-01", "cus_NffrFeUfNV2Hib8811", "a.b"];
const jsonTree = fc.letrec((tie) => ({
  value: fc.oneof({ maxDepth: 4 }, fc.constantFrom(null, true, false, 0, -1, 1.5, 1e3, 2.0, "x", 'es"c\\', "ü"), tie("object"), tie("array")),
  object: fc.dictionary(fc.constantFrom(...KEYS), tie("value"), { maxKeys: 5 }),
  array: fc.array(tie("value"), { maxLength: 4 }),
})).object;

const STRIPE = {
  id: "evt_1NG8Du2eZvKYlo2CuKKVtHwe",
  object: "event",
  type: "invoice.paid",
  created: 1700000000,
  livemode: false,
  data: { object: { id: "in_1", amount_due: 2000, currency: "usd", lines: { data: [{ id: "il_1", amount: 250 }, { id: "il_2", amount: 2.5 }] }, customer: null } },
};

describe("the shape of a JSON body (design §19)", () => {
  it("names every path with its types, arrays' elements as [], never a value", () => {
    const shape = bodyShape(bytes(JSON.stringify(STRIPE)))!;
    expect(shape.partial).toBe(false);
    const types = Object.fromEntries([...shape.paths].map(([p, m]) => [p, typesOfMask(m)]));
    expect(types).toEqual({
      id: ["string"],
      object: ["string"],
      type: ["string"],
      created: ["integer"],
      livemode: ["boolean"],
      data: ["object"],
      "data.object": ["object"],
      "data.object.id": ["string"],
      "data.object.amount_due": ["integer"],
      "data.object.currency": ["string"],
      "data.object.lines": ["object"],
      "data.object.lines.data": ["array"],
      "data.object.lines.data[]": ["object"],
      "data.object.lines.data[].id": ["string"],
      "data.object.lines.data[].amount": ["integer", "number"],
      "data.object.customer": ["null"],
    });
    const text = bodyShapeText(bytes(JSON.stringify(STRIPE)));
    for (const value of ["evt_1NG8Du2eZvKYlo2CuKKVtHwe", "usd", "il_1", "2000", "1700000000"]) expect(text).not.toContain(value);
    expect(decodeBodyShape(text)).toEqual(shape);
  });

  it("reads what JSON.parse reads, for any JSON object in any layout", () => {
    fc.assert(
      fc.property(jsonTree, fc.boolean(), (value, pretty) => {
        const text = JSON.stringify(value, null, pretty ? 2 : undefined);
        expect(sorted(bodyShape(bytes(text))?.paths)).toEqual(sorted(reference(text)));
      }),
      { numRuns: 400 },
    );
  });

  it("reads a body of many keys new to their places as JSON.parse does, whatever their characters", () => {
    // Past a few keys decoded one by one, the walk decodes the body whole: ASCII keys are sliced
    // from it, keys with other characters or escapes are still decoded alone.
    const kinds = (i: number) => [`field_${i}`, `ünï_${i}`, `esc\\u0061ped_${i}`, `🙂_${i}`, `k${i}`][i % 5]!;
    const members = Array.from({ length: 150 }, (_, i) => `"${kinds(i)}":{"v${i % 7}":${i % 2 ? '"x"' : i}}`);
    const text = `{${members.join(",")}}`;
    expect(sorted(bodyShape(bytes(text), { ...SCHEMA_LIMITS, pathsPerType: 10_000 })?.paths)).toEqual(sorted(reference(text)));
  });

  it("reads each body on its own: the paths and types of the bodies read before it never show", () => {
    const first = bodyShape(bytes(JSON.stringify(STRIPE)))!;
    // The same paths as the first, other types, fewer of them.
    const second = bodyShape(bytes('{"id":1,"data":{"object":[true]},"extra":null}'))!;
    expect([...second.paths].map(([p, m]) => [p, typesOfMask(m)])).toEqual([
      ["id", ["integer"]],
      ["data", ["object"]],
      ["data.object", ["array"]],
      ["data.object[]", ["boolean"]],
      ["extra", ["null"]],
    ]);
    expect(bodyShape(bytes(JSON.stringify(STRIPE)))).toEqual(first);
    // Past the paths a tree keeps (bodies with a new name each time), the next walks start a new one.
    for (let i = 0; i < 25_000; i += 1) expect(bodyShape(bytes(`{"name_${i.toString(36)}":{"n":${i}}}`))!.paths.size).toBe(2);
    expect(bodyShape(bytes(JSON.stringify(STRIPE)))).toEqual(first);
    // The same shape twice gives the same text; another shape after it, its own.
    const text = bodyShapeText(bytes(JSON.stringify(STRIPE)));
    expect(bodyShapeText(bytes(JSON.stringify({ ...STRIPE, id: "evt_2" })))).toBe(text);
    expect(decodeBodyShape(text)).toEqual(first);
    expect(bodyShapeText(bytes(JSON.stringify({ ...STRIPE, created: "yesterday" })))).toBe(text.replace("\ni:created", "\ns:created"));
    expect(bodyShapeText(bytes("{}"))).toBe(".");
    expect(bodyShapeText(bytes('{"a":{}}'))).toBe(".\no:a");
    expect(bodyShapeText(bytes("{}"))).toBe(".");
    // A path remembers its members' last order: keys in another order, one the start of another,
    // one escaped, each still read at its own path.
    const ordered = ['{"ab":1,"a":"x","b\\u0063":true}', '{"a":1,"ab":"x","bc":null}', '{"abc":[],"ab":1,"a":{}}', '{"ab":1,"a":"x","b\\u0063":true}'];
    for (const body of ordered) expect(sorted(bodyShape(bytes(body))?.paths), body).toEqual(sorted(reference(body)));
  });

  it("reads each of a run of bodies whose keys at a place change as JSON.parse does: prefixes, extensions, escapes", () => {
    // Keys as written in the body: some the start of others, some escaped (a\u0062 is "ab", a\"b is a"b).
    const key = fc.constantFrom("a", "ab", "abc", "b", "a\\u0062", 'a\\"b', "ü", "a b");
    const value = fc.constantFrom("1", '"x"', "{}", "[]", '{"ab":1,"a":[2]}', "null", "true", "1.5");
    // Each key once as decoded (JSON.parse keeps a repeated key's last value, the walk every type it met).
    const body = fc.uniqueArray(fc.tuple(key, value), { minLength: 1, maxLength: 6, selector: ([k]) => JSON.parse(`"${k}"`) as string }).map((members) => `{${members.map(([k, v]) => `"${k}":${v}`).join(",")}}`);
    fc.assert(
      fc.property(fc.array(body, { minLength: 2, maxLength: 8 }), (bodies) => {
        for (const text of bodies) expect(sorted(bodyShape(bytes(text))?.paths), text).toEqual(sorted(reference(text)));
      }),
      { numRuns: 300 },
    );
  });

  it("gives no shape to what is not a JSON object", () => {
    for (const text of ["", "[1,2]", '"x"', "42", "{", '{"a":1', '{"a":1,}', '{"a" 1}', '{"a":tru}', '{"a":-}', '{"a":1.2.3}', '{"a":[1,]}', '{"a":1} x', "{'a':1}", "a=1&b=2", '{"a":[}']) {
      expect(bodyShape(bytes(text)), text).toBeUndefined();
    }
    expect(bodyShape(bytes('\ufeff {"a":1} \n'))?.paths).toEqual(new Map([["a", TYPE_BIT.integer]]));
    expect(bodyShapeText(bytes("{}"))).toBe(".");
  });

  it("turns keys that look like data into *, so a map neither leaks its keys nor fills the schema", () => {
    const shape = bodyShape(bytes(JSON.stringify({ users: { "alice@example.com": { n: 1 }, "2024-01-01": { n: 2 }, "123": {}, "550e8400-e29b-41d4-a716-446655440000": {} }, address_line1: "x" })))!;
    expect([...shape.paths.keys()]).toEqual(["users", "users.*", "users.*.n", "address_line1"]);
    expect(segmentOf("cus_4242424242")).toBe("*");
    expect(segmentOf("sha256")).toBe("sha256");
    expect(segmentOf("x".repeat(65))).toBe("*");
  });

  it("bounds the work on a hostile body", () => {
    const small: ShapeLimits = { ...SCHEMA_LIMITS, arrayItems: 3, values: 50, depth: 4, pathsPerType: 5, pathLength: 12 };
    // Too large to read at all.
    expect(bodyShape(bytes(`{"a":"${"x".repeat(SCHEMA_LIMITS.bodyBytes)}"}`))).toBeUndefined();
    // Deep: stepped over below the depth, the rest still read, not partial.
    const deep = bodyShape(bytes(`{"a":{"b":{"c":{"d":{"e":{"f":1}}}}},"z":true}`), small)!;
    expect([...deep.paths.keys()]).toEqual(["a", "a.b", "a.b.c", "a.b.c.d", "z"]);
    expect(deep.partial).toBe(false);
    // Past the array elements looked at: partial, and the rest of the body still read.
    const long = bodyShape(bytes(`{"a":[1,2,3,"s",null],"z":1}`), small)!;
    expect(long.paths.get("a[]")).toBe(TYPE_BIT.integer);
    expect(long.paths.has("z")).toBe(true);
    expect(long.partial).toBe(true);
    // Past the paths kept: the 6th is not kept, and the shape says it is partial.
    const wide = bodyShape(bytes(`{"a":1,"b":1,"c":1,"d":1,"e":1,"f":1}`), small)!;
    expect(wide.paths.size).toBe(5);
    expect(wide.partial).toBe(true);
    // A path longer than allowed is not kept.
    expect(bodyShape(bytes(`{"abcdef":{"ghijkl":1}}`), small)!.partial).toBe(true);
    // Past the values looked at.
    expect(bodyShape(bytes(`{"a":[${Array(60).fill("[]").join(",")}]}`), { ...small, arrayItems: 1000 })!.partial).toBe(true);
    // 256 KiB of nesting and 256 KiB of tiny values are read in bounded time, without recursion.
    const nested = bytes(`{"a":${"[".repeat(100_000)}${"]".repeat(100_000)}}`);
    expect(bodyShape(nested)!.paths.size).toBe(SCHEMA_LIMITS.depth);
    const many = bytes(`{"a":[${Array(60_000).fill("0").join(",")}]}`);
    expect(bodyShape(many)!.partial).toBe(true);
  });

  it("never throws on arbitrary bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.string({ maxLength: 60 }), (raw, text) => {
        bodyShape(raw);
        bodyShape(bytes(`{"a":${text}}`));
      }),
      { numRuns: 300 },
    );
  });
});
