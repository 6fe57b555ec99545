import { describe, expect, it } from "vitest";
import { bodyKind } from "./index.js";

const bytes = (text: string) => Buffer.from(text, "utf8");

describe("bodyKind", () => {
  it.each([
    ["json object", '{"a":1,"b":[true,null]}', "json"],
    ["json array after whitespace", '\n  [1, 2, "ü"]\n', "json"],
    ["json after a byte order mark", '\ufeff{"a":1}', "json"],
    ["form", "payload=%7B%22a%22%3A1%7D&token=abc+def", "form"],
    ["form with a trailing newline", "a=1&b=2\n", "form"],
    ["text", "Hello, world: ünïcode ✓", "text"],
    ["text with an equals sign and spaces", "a = b", "text"],
    ["a broken object is text", '{"a":', "text"],
    ["whitespace only is text", " \n ", "text"],
    ["empty", "", "empty"],
  ])("sees %s", (_, body, kind) => {
    expect(bodyKind(undefined, bytes(body)).bodyIs).toBe(kind);
  });

  it.each([
    ["invalid UTF-8", Buffer.from([0xff, 0xfe, 0x00, 0x41])],
    ["a NUL byte", Buffer.from("ab\0cd")],
    ["a PNG header", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])],
  ])("sees binary in %s", (_, body) => {
    expect(bodyKind("application/octet-stream", body)).toEqual({ declared: "application/octet-stream", bodyIs: "binary", mismatch: false });
  });

  it("answers each capture its own kind when answers alternate, as one frozen object per answer in a row", () => {
    const cases: [string | undefined, string, { declared: string | null; bodyIs: string; mismatch: boolean }][] = [
      ["application/json", '{"a":1}', { declared: "application/json", bodyIs: "json", mismatch: false }],
      ["application/json", "a=1", { declared: "application/json", bodyIs: "form", mismatch: true }],
      [undefined, "", { declared: null, bodyIs: "empty", mismatch: false }],
      ["text/plain", '{"a":1}', { declared: "text/plain", bodyIs: "json", mismatch: false }],
    ];
    for (let round = 0; round < 3; round += 1) {
      for (const [declared, body, expected] of cases) {
        const first = bodyKind(declared, bytes(body));
        expect(first).toEqual(expected);
        expect(Object.isFrozen(first)).toBe(true);
        expect(bodyKind(declared, bytes(body))).toBe(first);
      }
    }
  });

  it("keeps the declared media type without its parameters, null when none was sent", () => {
    expect(bodyKind("Application/JSON; charset=utf-8", bytes("{}")).declared).toBe("application/json");
    expect(bodyKind(undefined, bytes("{}")).declared).toBeNull();
    expect(bodyKind("  ", bytes("{}")).declared).toBeNull();
  });

  it.each([
    ["application/json", "a=1", true],
    ["application/json", "plain words", true],
    ["application/vnd.api+json", "plain words", true],
    ["application/json", '{"a":1}', false],
    ["application/x-www-form-urlencoded", '{"a":1}', true],
    ["application/x-www-form-urlencoded", "a=1&b=2", false],
    ["text/plain", '{"a":1}', false],
    ["text/plain", "\u0000\u0001", true],
    ["application/xml", '{"a":1}', false],
    ["application/json", "", false],
  ])("declared %s with body %j: mismatch %s", (declared, body, mismatch) => {
    expect(bodyKind(declared, bytes(body)).mismatch).toBe(mismatch);
  });

  it("judges a large JSON body by its first and last bytes, without parsing it", () => {
    const large = `{"items":[${'"x",'.repeat(100_000)}"end"]}`;
    expect(bodyKind("application/json", bytes(large))).toEqual({ declared: "application/json", bodyIs: "json", mismatch: false });
    expect(bodyKind("application/json", bytes(`${large.slice(0, -1)}  `)).bodyIs).toBe("text");
  });

  it("reads only the start of a large body, without splitting a character at the cut", () => {
    // 'é' is two bytes; an odd prefix puts one across the 64 KiB sample boundary.
    const text = `a${"é".repeat(70_000)}`;
    expect(bodyKind(undefined, bytes(text)).bodyIs).toBe("text");
    const form = `a=${"b".repeat(100_000)}&c=d`;
    expect(bodyKind(undefined, bytes(form)).bodyIs).toBe("form");
  });
});
