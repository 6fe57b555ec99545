import { describe, expect, it } from "vitest";
import { checkTransformSource } from "./source-check.js";

describe("checkTransformSource (when a transform is saved)", () => {
  it("accepts each way of declaring transform at the top level", () => {
    for (const source of [
      "function transform(req) { return req; }",
      "async function transform(req) { return req; }",
      "const transform = (req) => req;",
      "let transform = function (req) { return req; };",
      "var transform = (req) => null; // a comment at the end",
      "'use strict';\nconst helper = (h) => h;\nfunction transform(req) { return helper(req); }",
    ]) {
      expect(checkTransformSource(source), source).toEqual({ ok: true });
    }
  });

  it("refuses a source over 64 KiB of UTF-8 (reason length)", () => {
    const source = `function transform(r) { return r; } // ${"é".repeat(33_000)}`;
    expect(checkTransformSource(source)).toMatchObject({ ok: false, reason: "length", message: expect.stringMatching(/at most 65536 bytes/) });
  });

  it("refuses a source that does not parse, naming the line (reason format)", () => {
    const result = checkTransformSource("function transform(req) {\n  return req.;\n}");
    expect(result).toMatchObject({ ok: false, reason: "format" });
    expect(!result.ok && result.message).toMatch(/^the transform does not parse: SyntaxError: .* \(line 2\)$/);
    expect(checkTransformSource("import fs from 'fs'; function transform(r) { return r; }")).toMatchObject({ ok: false, reason: "format" });
  });

  it("refuses a source that does not declare transform at its top level (reason required), without running it", () => {
    for (const source of ["function transfrom(req) { return req; }", "{ function inner() {} }", "(function () { function transform(r) { return r; } })();", "globalThis.transform = (r) => r;", ""]) {
      expect(checkTransformSource(source), source).toMatchObject({ ok: false, reason: "required", message: expect.stringMatching(/function named transform/) });
    }
    // Compiled, never run: a top-level statement with effects has none.
    let ran = false;
    (globalThis as { __sideEffect?: () => void }).__sideEffect = () => {
      ran = true;
    };
    expect(checkTransformSource("__sideEffect(); function transform(r) { return r; }")).toEqual({ ok: true });
    expect(ran).toBe(false);
  });
});
