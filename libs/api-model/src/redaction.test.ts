import { describe, expect, it } from "vitest";
import { checkShape } from "./problems.js";
import { MAX_PATTERN_COST, parseJsonPath, patternCost, patternProblem, redactSettings, redactSettingsOf } from "./redaction.js";

describe("redaction settings (design §16, ADR 0045)", () => {
  it("takes the example of the design", () => {
    const settings = { headers: ["authorization"], jsonPaths: ["$.card.number"], patterns: ["\\b\\d{13,19}\\b"] };
    expect(checkShape(redactSettings, settings)).toEqual({ ok: true, value: settings });
    expect(redactSettingsOf(JSON.stringify(settings))).toEqual(settings);
    expect(redactSettingsOf(JSON.stringify({}))).toBeUndefined();
    expect(redactSettingsOf("not json")).toBeUndefined();
  });

  it("reads the JSONPath subset and nothing else", () => {
    expect(parseJsonPath("$.card.number")).toEqual([{ key: "card" }, { key: "number" }]);
    expect(parseJsonPath("$.items[0].pan")).toEqual([{ key: "items" }, { index: 0 }, { key: "pan" }]);
    expect(parseJsonPath("$.items[*].pan")).toEqual([{ key: "items" }, { any: true }, { key: "pan" }]);
    expect(parseJsonPath("$[2]")).toEqual([{ index: 2 }]);
    for (const bad of ["$", "card.number", "$.", "$..a", "$.a[", "$.a[-1]", "$['a']", "$.a b", "$.a[?(@.x)]", "$.*"]) {
      expect(parseJsonPath(bad), bad).toBeUndefined();
    }
    expect(checkShape(redactSettings, { jsonPaths: ["$.ok", "$..deep"] })).toMatchObject({ ok: false, problem: { field: "jsonPaths.1", reason: "format" } });
  });

  it("refuses patterns that do not compile or could backtrack without bound", () => {
    expect(patternProblem("\\b\\d{13,19}\\b")).toBeUndefined();
    expect(patternProblem("sk_live_[A-Za-z0-9]{24,64}")).toBeUndefined();
    expect(patternProblem("(unclosed")).toMatch(/does not compile/);
    expect(patternProblem("\\d+")).toMatch(/upper bound/);
    expect(patternProblem("a*")).toMatch(/upper bound/);
    expect(patternProblem("a{2,}")).toMatch(/upper bound/);
    expect(patternProblem("(a)\\1")).toMatch(/backreferences/);
    expect(patternProblem("(?<n>a)\\k<n>")).toMatch(/backreferences/);
    expect(patternProblem("a(?=b)")).toMatch(/lookahead/);
    expect(patternProblem("(?<!a)b")).toMatch(/lookahead/);
    expect(patternProblem("a{1,1001}")).toMatch(/at most/);
    // Nested and adjacent repetitions multiply: the classic catastrophic shapes are refused by cost.
    expect(patternProblem("(?:a{1,10}){1,10}")).toMatch(/backtrack/);
    expect(patternProblem("(?:a|aa){1,20}b")).toMatch(/backtrack/);
    expect(patternProblem("\\d{1,100}\\d{1,100}x")).toMatch(/backtrack/);
  });

  it("works out a pattern's cost from its syntax", () => {
    expect(patternCost("abc")).toEqual({ cost: 4 });
    // \b, then 13 digits and 6 optional ones (7 ways out), then \b once per way.
    expect(patternCost("\\b\\d{13,19}\\b")).toEqual({ cost: 34 });
    expect(patternCost("[a-z]|[0-9]")).toEqual({ cost: 4 });
    // ab or not (2 ways out), then c on each way.
    expect(patternCost("(?:ab)?c")).toEqual({ cost: 6 });
    expect(patternCost("[\\]x]{2}")).toEqual({ cost: 3 });
  });

  it("limits the lists, their entries and the patterns' cost together", () => {
    const many = (n: number, make: (i: number) => string) => Array.from({ length: n }, (_, i) => make(i));
    expect(checkShape(redactSettings, { headers: many(51, (i) => `x-h${i}`) })).toMatchObject({ ok: false, problem: { field: "headers", reason: "length" } });
    expect(checkShape(redactSettings, { headers: ["bad header"] })).toMatchObject({ ok: false, problem: { field: "headers.0", reason: "pattern" } });
    expect(checkShape(redactSettings, { jsonPaths: [`$.${"a".repeat(200)}`] })).toMatchObject({ ok: false, problem: { field: "jsonPaths.0", reason: "length" } });
    expect(checkShape(redactSettings, { patterns: many(11, (i) => `p${i}`) })).toMatchObject({ ok: false, problem: { field: "patterns", reason: "length" } });
    expect(checkShape(redactSettings, { patterns: ["x".repeat(201)] })).toMatchObject({ ok: false, problem: { field: "patterns.0", reason: "length" } });
    // Each one alone is allowed; together they pass the budget.
    const costly = "\\d{1,60}x";
    expect(patternProblem(costly)).toBeUndefined();
    const total = (patternCost(costly) as { cost: number }).cost * 2;
    expect(total).toBeGreaterThan(MAX_PATTERN_COST);
    expect(checkShape(redactSettings, { patterns: [costly, costly] })).toMatchObject({ ok: false, problem: { field: "patterns", reason: "range" } });
    expect(checkShape(redactSettings, { other: [] })).toMatchObject({ ok: false, problem: { field: "other", reason: "unknown" } });
  });
});
