import fc from "fast-check";
import { describe, it, expect } from "vitest";
import { packRequest, unpackRequest } from "./index.js";

describe("the packed request", () => {
  it("gives back exactly the path and headers it packed: order, repeats, any byte of a value", () => {
    const text = fc.string({ unit: "binary", maxLength: 40 });
    const latin1 = fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b).toString("latin1"));
    fc.assert(
      fc.property(fc.oneof(text, latin1), fc.array(fc.tuple(fc.string({ maxLength: 20 }), fc.oneof(text, latin1)), { maxLength: 12 }), (path, headers) => {
        expect(unpackRequest(packRequest({ path, headers }))).toEqual({ path, headers });
      }),
      { numRuns: 500 },
    );
  });

  it("refuses bytes that are not a packed request", () => {
    for (const bad of ["{}", "[]", '["/", "name"]', "[1]", "not json"]) expect(() => unpackRequest(Buffer.from(bad))).toThrow();
  });
});
