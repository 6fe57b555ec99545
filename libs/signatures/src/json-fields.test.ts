import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { jsonFields, type FieldSpec } from "./json-fields.js";

const bytes = (text: string) => Buffer.from(text, "utf8");
const SPEC: FieldSpec = { type: true, challenge: true, event: { type: true } };

/** What the same spec reads off JSON.parse's result: the reference semantics. */
function viaParse(value: Record<string, unknown>) {
  const str = (v: unknown) => (typeof v === "string" ? v : undefined);
  const event = value["event"];
  const nested =
    typeof event === "object" && event !== null && !Array.isArray(event) ? { type: str((event as Record<string, unknown>)["type"]) } : undefined;
  return { type: str(value["type"]), challenge: str(value["challenge"]), event: nested };
}

function normalised(fields: ReturnType<typeof jsonFields>) {
  const event = fields?.["event"];
  return {
    type: fields?.["type"],
    challenge: fields?.["challenge"],
    event: typeof event === "object" ? { type: event["type"] } : undefined,
  };
}

describe("jsonFields", () => {
  it("reads what JSON.parse reads, for any JSON object and any layout", () => {
    const value = fc.jsonValue({ maxDepth: 4 });
    const object = fc.record(
      {
        type: fc.oneof(fc.string(), value),
        challenge: fc.oneof(fc.string({ unit: "grapheme" }), value),
        event: fc.oneof(fc.dictionary(fc.string(), value), fc.record({ type: fc.oneof(fc.string(), value) }), value),
        other: value,
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(object, fc.dictionary(fc.string(), value), fc.constantFrom(undefined, 0, 2, "\t"), (picked, rest, indent) => {
        const doc = { ...rest, ...picked };
        const text = JSON.stringify(doc, null, indent);
        expect(normalised(jsonFields(bytes(text), SPEC))).toEqual(viaParse(JSON.parse(text) as Record<string, unknown>));
      }),
      { numRuns: 500 },
    );
  });

  it("decodes escapes in keys and values as JSON.parse does", () => {
    const text = '{"typ\\u0065": "a\\"b\\\\c\\u00e9\\ud83d\\ude00", "challenge": "x\\ny"}';
    expect(jsonFields(bytes(text), SPEC)).toEqual({ type: 'a"b\\cé😀', challenge: "x\ny" });
  });

  it("takes a wanted name only from a key that is exactly it", () => {
    const text = '{"typ":"a","types":"b","Type":"c","ttype":"d","challengE":"e","event":{"typ":"f"}}';
    expect(normalised(jsonFields(bytes(text), SPEC))).toEqual({ type: undefined, challenge: undefined, event: { type: undefined } });
    expect(jsonFields(bytes('{"typ":"a","type":"b","types":"c"}'), SPEC)?.["type"]).toBe("b");
    // Not the spec's inherited names either.
    expect(jsonFields(bytes('{"toString":"x","constructor":"y"}'), SPEC)).toEqual({});
  });

  it("steps over strings holding brackets and quotes inside skipped values", () => {
    const text = '{"skip": ["]}\\"{[", {"a": "}}}"}], "type": "found"}';
    expect(jsonFields(bytes(text), SPEC)?.["type"]).toBe("found");
  });

  it("lets a later duplicate replace an earlier one, as JSON.parse does", () => {
    expect(jsonFields(bytes('{"type": "a", "type": "b"}'), SPEC)?.["type"]).toBe("b");
    expect(jsonFields(bytes('{"type": "a", "type": 5}'), SPEC)?.["type"]).toBeUndefined();
  });

  it("answers undefined for anything but an object", () => {
    for (const text of ["", "[]", '"type"', "null", "type=x", "  [{\"type\":\"x\"}]"]) {
      expect(jsonFields(bytes(text), SPEC), text).toBeUndefined();
    }
  });

  it("skips a byte order mark and leading whitespace", () => {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes(' \r\n\t{"type":"bom"}')]);
    expect(jsonFields(body, SPEC)?.["type"]).toBe("bom");
  });

  it("keeps what came before a cut or a malformed part", () => {
    expect(jsonFields(bytes('{"type": "early", "padding": "ppp'), SPEC)?.["type"]).toBe("early");
    expect(jsonFields(bytes('{"type": "early", oops'), SPEC)?.["type"]).toBe("early");
    expect(jsonFields(bytes('{"padding": [1, 2'), SPEC)?.["type"]).toBeUndefined();
  });

  it("is not thrown by invalid UTF-8: a value that is not UTF-8 is not a string, others still read", () => {
    const bad = Buffer.concat([bytes('{"challenge": "'), Buffer.from([0xff, 0xfe]), bytes('", "skip": "'), Buffer.from([0xc3]), bytes('", "type": "ok"}')]);
    expect(jsonFields(bad, SPEC)).toEqual({ challenge: undefined, type: "ok" });
  });

  it("reads an object field only when it is an object", () => {
    expect(jsonFields(bytes('{"event": "message"}'), SPEC)?.["event"]).toBeUndefined();
    expect(jsonFields(bytes('{"event": {"type": "message", "x": [1]}}'), SPEC)?.["event"]).toEqual({ type: "message" });
  });

  it("reads past deep nesting without building it", () => {
    const depth = 200_000;
    const body = bytes(`{"deep": ${"[".repeat(depth)}${"]".repeat(depth)}, "type": "after.deep"}`);
    expect(jsonFields(body, SPEC)?.["type"]).toBe("after.deep");
  });
});
