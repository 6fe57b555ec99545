import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { packTokens, unpackTokens } from "./token-pack.js";

describe("packed search tokens", () => {
  it("come back as the same tokens in the same order", () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 60 }), (tokens) => {
        expect(unpackTokens(packTokens(tokens)).map((t) => [...t])).toEqual(tokens.map((t) => [...t]));
      }),
    );
  });

  it("refuse a token too long to pack and a packed buffer cut short", () => {
    expect(() => packTokens([new Uint8Array(256)])).toThrow(RangeError);
    expect(() => unpackTokens(packTokens([new Uint8Array(8)]).subarray(0, 5))).toThrow(RangeError);
  });
});
