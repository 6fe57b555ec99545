import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { JsonPathStep } from "@whc/api-model";
import { compileRedactor, jsonValueSpans, redact } from "./redact.js";

const bytes = (text: string) => Buffer.from(text, "utf8");

/** What the paths select, replaced on the parsed value: the reference the byte splice must agree with. */
function reference(value: unknown, path: readonly JsonPathStep[]): unknown {
  if (path.length === 0) return "[redacted]";
  const [step, ...rest] = path as [JsonPathStep, ...JsonPathStep[]];
  if (Array.isArray(value)) {
    return value.map((v, i) => ("any" in step || ("index" in step && step.index === i) ? reference(v, rest) : v));
  }
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, "any" in step || ("key" in step && step.key === k) ? reference(v, rest) : v]));
  }
  return value;
}

const KEYS = ["card", "number", "a", "b", "ünï", 'q"t'];
const jsonTree = fc.letrec((tie) => ({
  value: fc.oneof({ maxDepth: 4 }, fc.constantFrom(null, true, false, 0, -1.5e3, "x", "4242424242424242", 'es"c\\'), tie("object"), tie("array")),
  object: fc.dictionary(fc.constantFrom(...KEYS), tie("value"), { maxKeys: 4 }),
  array: fc.array(tie("value"), { maxLength: 4 }),
})).value;
const step: fc.Arbitrary<JsonPathStep> = fc.oneof(
  fc.constantFrom(...KEYS).map((key) => ({ key })),
  fc.integer({ min: 0, max: 3 }).map((index) => ({ index })),
  fc.constant({ any: true as const }),
);
const path = fc.array(step, { minLength: 1, maxLength: 4 });

describe("redaction of a capture (design §16)", () => {
  it("splices the value at a path out of the raw bytes, every other byte as it came", () => {
    const body = '{ "id":"evt_1",\n  "card" : {"number": "4242 4242 4242 4242" , "exp":"12/34"},"amount":1e2 }';
    const r = compileRedactor({ jsonPaths: ["$.card.number"] })!;
    const out = redact(r, [], bytes(body));
    expect(out.body!.toString()).toBe('{ "id":"evt_1",\n  "card" : {"number": "[redacted]" , "exp":"12/34"},"amount":1e2 }');
    expect(out.counts).toEqual({ headers: 0, jsonPaths: 1, patterns: 0 });
  });

  it("selects array elements by index and every element with [*], objects and arrays whole", () => {
    const body = bytes('{"items":[{"pan":"1"},{"pan":{"deep":[1,2]}},{"other":"3"}],"list":[[1],[2]]}');
    const r = compileRedactor({ jsonPaths: ["$.items[*].pan", "$.list[1]", "$.list[0][0]"] })!;
    expect(redact(r, [], body).body!.toString()).toBe('{"items":[{"pan":"[redacted]"},{"pan":"[redacted]"},{"other":"3"}],"list":[["[redacted]"],"[redacted]"]}');
    expect(redact(r, [], body).counts.jsonPaths).toBe(4);
  });

  it("agrees with JSON.parse on any document, whatever its spacing and escapes", () => {
    fc.assert(
      fc.property(jsonTree, fc.array(path, { minLength: 1, maxLength: 3 }), fc.constantFrom(undefined, 1, "\t"), (value, paths, indent) => {
        const text = JSON.stringify(value, null, indent);
        const spans = jsonValueSpans(bytes(text), paths);
        const r = { headers: new Set<string>(), paths, patterns: [] };
        const out = redact(r, [], bytes(text)).body!.toString("utf8");
        let expected = value;
        for (const p of paths) expected = reference(expected, p);
        expect(JSON.parse(out)).toEqual(expected);
        // Outside the spans, the bytes are the original ones.
        if (spans.length > 0) {
          expect(out.startsWith(bytes(text).subarray(0, spans[0]![0]).toString())).toBe(true);
          expect(out.endsWith(bytes(text).subarray(spans.at(-1)![1]).toString())).toBe(true);
        } else expect(out).toBe(text);
      }),
      { numRuns: 400 },
    );
  });

  it("keeps what it found before bytes stop being JSON, and never fails on any bytes", () => {
    const r = compileRedactor({ jsonPaths: ["$.card.number"] })!;
    const cut = bytes('{"card":{"number":"4242424242424242"},"rest":"cut of');
    expect(redact(r, [], cut).body!.toString()).toBe('{"card":{"number":"[redacted]"},"rest":"cut of');
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes('{"card":{"number":1}}')]);
    expect(redact(r, [], bom).body!.subarray(3).toString()).toBe('{"card":{"number":"[redacted]"}}');
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (garbage) => {
        redact(r, [], Buffer.from(garbage));
      }),
      { numRuns: 500 },
    );
    // Nesting deeper than any stack is skipped, not recursed into.
    const deep = bytes(`{"x":${"[".repeat(200_000)}${"]".repeat(200_000)},"card":{"number":1}}`);
    expect(redact(r, [], deep).counts.jsonPaths).toBe(1);
  });

  it("replaces header values by name in any case, and pattern matches in UTF-8 bodies", () => {
    const r = compileRedactor({ headers: ["Authorization", "x-api-key"], patterns: ["\\b\\d{13,19}\\b", "sk_live_[A-Za-z0-9]{4,64}"] })!;
    const out = redact(
      r,
      [
        ["AUTHORIZATION", "Bearer t0k"],
        ["Content-Type", "text/plain"],
        ["X-Api-Key", "one"],
        ["x-api-key", "two"],
      ],
      bytes("café 4242424242424242 and 1234 and sk_live_abcDEF123 done"),
    );
    expect(out.headers).toEqual([
      ["AUTHORIZATION", "[redacted]"],
      ["Content-Type", "text/plain"],
      ["X-Api-Key", "[redacted]"],
      ["x-api-key", "[redacted]"],
    ]);
    expect(out.body!.toString()).toBe("café [redacted] and 1234 and [redacted] done");
    expect(out.counts).toEqual({ headers: 3, jsonPaths: 0, patterns: 2 });
  });

  it("leaves bodies that are not UTF-8 to their JSON paths, and empty matches alone", () => {
    const r = compileRedactor({ patterns: ["\\d{0,3}"] })!;
    expect(redact(r, [], bytes("ab12")).body!.toString()).toBe("ab[redacted]");
    const binary = Buffer.from([0xff, 0x31, 0x32, 0x33]);
    const out = redact(r, [], binary);
    expect(out.body).toBe(binary);
    expect(out.counts.patterns).toBe(0);
  });

  it("gives the same buffer back when nothing matched", () => {
    const body = bytes('{"a":1}');
    const out = redact(compileRedactor({ jsonPaths: ["$.b"], patterns: ["zz"] })!, [["A", "1"]], body);
    expect(out.body).toBe(body);
    expect(out.counts).toEqual({ headers: 0, jsonPaths: 0, patterns: 0 });
  });
});
