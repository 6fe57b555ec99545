import { describe, expect, it } from "vitest";
import { header, hasHeader, indexedBy, type HeaderPair } from "./headers.js";

describe("header lookup", () => {
  const lines: HeaderPair[] = [
    ["Stripe-Signature", " t=1,v1=a "],
    ["X-Custom", "first"],
    ["x-custom", "second"],
  ];

  it("answers the same from a frozen list (indexed) as from a list that can change", () => {
    const frozen = Object.freeze([...lines]);
    for (const list of [lines, frozen]) {
      expect(header(list, "stripe-signature")).toBe("t=1,v1=a");
      expect(header(list, "X-CUSTOM")).toBe("first");
      expect(header(list, "absent")).toBeUndefined();
      expect(hasHeader(list, "absent", "x-custom")).toBe(true);
    }
  });

  it("answers each of several frozen lists looked up in turn from its own headers", () => {
    const a = Object.freeze<HeaderPair[]>([["X-Id", "a"], ["X-Only-A", "1"]]);
    const b = Object.freeze<HeaderPair[]>([["x-id", "b"]]);
    for (const [list, id, onlyA] of [[a, "a", "1"], [b, "b", undefined], [a, "a", "1"], [a, "a", "1"], [b, "b", undefined]] as const) {
      expect(header(list, "X-ID")).toBe(id);
      expect(header(list, "x-only-a")).toBe(onlyA);
    }
  });

  it("never answers a list that changed after a lookup from a stale index", () => {
    const list: HeaderPair[] = [["A", "1"]];
    expect(header(list, "b")).toBeUndefined();
    list.push(["B", "2"]);
    expect(header(list, "b")).toBe("2");
  });

  it("reads a list through the object it was indexed by, and only that list", () => {
    const list = Object.freeze<HeaderPair[]>([["Stripe-Signature", " t=1 "], ["Set-Cookie", "a=b"], ["X-Empty", ""]]);
    // As Node's IncomingMessage.headers has them: lower-cased names, set-cookie an array.
    indexedBy(list, { "stripe-signature": " t=1 ", "set-cookie": ["a=b"], "x-empty": "" });
    expect(header(list, "STRIPE-SIGNATURE")).toBe("t=1");
    expect(header(list, "set-cookie")).toBe("a=b");
    expect(header(list, "x-empty")).toBe("");
    expect(header(list, "absent")).toBeUndefined();
    // Names the object's prototype has are no headers.
    for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty"]) expect(header(list, name)).toBeUndefined();
    // Another list looked up in between is read from its own lines, and the first is again after it.
    const other = Object.freeze<HeaderPair[]>([["stripe-signature", "other"]]);
    expect(header(other, "stripe-signature")).toBe("other");
    expect(header(list, "stripe-signature")).toBe("t=1");
    expect(header(list, "set-cookie")).toBe("a=b");
  });
});

