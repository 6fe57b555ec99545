import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { formField } from "./body.js";

describe("formField", () => {
  const reference = (text: string, name: string) => new URLSearchParams(text).get(name) ?? undefined;

  it("gives what URLSearchParams.get gives, for encoded and raw forms", () => {
    const word = fc.oneof(fc.constantFrom("payload", "pay load", "päyload", "a+b", "%41", "", "="), fc.string({ maxLength: 6 }));
    const encoded = fc.array(fc.tuple(word, fc.string({ maxLength: 8 })), { maxLength: 6 }).map((pairs) => new URLSearchParams(pairs).toString());
    const raw = fc.array(fc.oneof(fc.constantFrom("payload=1", "payload", "pay%6Coad=x", "payload=%zz", "pay+load=y", "", "?payload=q", "=v"), fc.string({ maxLength: 8 })), { maxLength: 6 }).map((parts) => parts.join("&"));
    fc.assert(
      fc.property(fc.oneof(encoded, raw), word, (text, name) => {
        expect(formField(Buffer.from(text), name)).toEqual(reference(text, name));
      }),
      { numRuns: 2000 },
    );
  });

  it("reads past a byte order mark as the decoded text would", () => {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("?payload=%7B%7D&x=1")]);
    expect(formField(body, "payload")).toBe(reference(new TextDecoder().decode(body), "payload"));
    expect(formField(body, "payload")).toBe("{}");
    // A mark inside, at the start of a pair, is part of that pair's name.
    const inside = Buffer.concat([Buffer.from("x=1&"), Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("pay%6Coad=2")]);
    expect(formField(inside, "payload")).toBe(reference(inside.toString("utf8"), "payload"));
  });

  it("finds the first value and decodes only it", () => {
    const text = `a=1&${"x=y&".repeat(1000)}payload=%7B%22type%22%3A%22t%22%7D&payload=second`;
    expect(formField(Buffer.from(text), "payload")).toBe('{"type":"t"}');
  });
});
