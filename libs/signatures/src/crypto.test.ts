import { describe, expect, it } from "vitest";
import { anyEqual, bytesEqual, decodeBase64, decodeHex, prefixedHexDigest } from "./crypto.js";

describe("bytesEqual", () => {
  it("compares contents, and treats different lengths as unequal without throwing", () => {
    expect(bytesEqual(Buffer.from("abc"), new Uint8Array([0x61, 0x62, 0x63]))).toBe(true);
    expect(bytesEqual(Buffer.from("abc"), Buffer.from("abd"))).toBe(false);
    expect(bytesEqual(Buffer.from("abc"), Buffer.from("abcd"))).toBe(false);
    expect(bytesEqual(new Uint8Array(), Buffer.alloc(32))).toBe(false);
  });
});

describe("anyEqual", () => {
  it("finds the expected value in any position", () => {
    const expected = Buffer.from("expected");
    expect(anyEqual([Buffer.from("a"), Buffer.from("expected")], expected)).toBe(true);
    expect(anyEqual([Buffer.from("expected"), Buffer.from("b")], expected)).toBe(true);
    expect(anyEqual([Buffer.from("a"), Buffer.from("b")], expected)).toBe(false);
    expect(anyEqual([], expected)).toBe(false);
  });
});

describe("decodeHex", () => {
  it("decodes either case and refuses anything else", () => {
    expect(decodeHex("0aFf")).toEqual(Buffer.from([0x0a, 0xff]));
    expect(decodeHex("")).toBeUndefined();
    expect(decodeHex("abc")).toBeUndefined();
    expect(decodeHex("0g")).toBeUndefined();
    expect(decodeHex("00 ")).toBeUndefined();
  });
});

describe("decodeBase64", () => {
  it("decodes standard base64, padded or not", () => {
    expect(decodeBase64("aGk=")).toEqual(Buffer.from("hi"));
    expect(decodeBase64("aGk")).toEqual(Buffer.from("hi"));
    expect(decodeBase64("+/8=")).toEqual(Buffer.from([0xfb, 0xff]));
  });

  it("refuses other alphabets, stray characters and non-canonical bits", () => {
    expect(decodeBase64("")).toBeUndefined();
    expect(decodeBase64("-_8=")).toBeUndefined();
    expect(decodeBase64("aG k=")).toBeUndefined();
    expect(decodeBase64("a=Gk")).toBeUndefined();
    expect(decodeBase64("aGl=")).toBeUndefined();
    expect(decodeBase64("a")).toBeUndefined();
  });
});

describe("prefixedHexDigest", () => {
  const hex = "ab".repeat(32);
  it("needs the prefix (any case) and exactly a SHA-256 digest", () => {
    expect(prefixedHexDigest(`sha256=${hex}`, "sha256=")).toEqual(Buffer.from(hex, "hex"));
    expect(prefixedHexDigest(`SHA256=${hex}`, "sha256=")).toEqual(Buffer.from(hex, "hex"));
    expect(prefixedHexDigest(hex, "")).toEqual(Buffer.from(hex, "hex"));
    expect(prefixedHexDigest(hex, "sha256=")).toBeUndefined();
    expect(prefixedHexDigest(`sha256=${hex}00`, "sha256=")).toBeUndefined();
  });
});
