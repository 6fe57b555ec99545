import { describe, expect, it } from "vitest";
import { checkResult } from "./result.js";

const ok = { method: "POST", path: "/a/b", query: "x=1", headers: { "Content-Type": ["application/json"] }, body: { a: 1 } };
const refused = (over: Record<string, unknown>) => {
  try {
    checkResult({ ...ok, ...over });
  } catch (err) {
    return (err as Error).message;
  }
  return "accepted";
};

describe("checkResult: the request a transform returned", () => {
  it("accepts a well-formed request, lower-casing header names and merging two spellings of one", () => {
    expect(checkResult({ ...ok, headers: { "X-A": ["1"], "x-a": ["2"] } })).toEqual({ ...ok, headers: { "x-a": ["1", "2"] } });
    expect(checkResult(ok)?.headers).toEqual({ "content-type": ["application/json"] });
    expect(checkResult({ method: "GET", path: "/", query: "", headers: {} })).toEqual({ method: "GET", path: "/", query: "", headers: {} });
    const binary = checkResult({ ...ok, body: undefined, bodyBase64: "AAEC" });
    expect(binary).toEqual({ method: "POST", path: "/a/b", query: "x=1", headers: { "content-type": ["application/json"] }, bodyBase64: "AAEC" });
    expect(binary).not.toHaveProperty("body");
    expect(checkResult({ ...ok, query: "?x=1" })?.query).toBe("x=1");
    expect(checkResult(null)).toBeNull();
  });

  it("refuses what is not a request", () => {
    for (const value of [5, "x", true, [ok]]) expect(() => checkResult(value)).toThrow(/must return the request \(an object\) or null/);
  });

  it("refuses each bad field with a message naming it", () => {
    expect(refused({ method: 1 })).toMatch(/method must be a string, not a number/);
    expect(refused({ method: "GE T" })).toMatch(/is not an HTTP method/);
    expect(refused({ method: "CONNECT" })).toMatch(/cannot be forwarded/);
    expect(refused({ path: "a" })).toMatch(/path must start with "\/"/);
    expect(refused({ path: "/a b" })).toMatch(/visible ASCII/);
    expect(refused({ path: "/a?b" })).toMatch(/no "\?"/);
    expect(refused({ path: "/é" })).toMatch(/percent-encode/);
    expect(refused({ query: null })).toMatch(/query must be a string, not null/);
    expect(refused({ query: "a#b" })).toMatch(/no "#"/);
    expect(refused({ headers: [] })).toMatch(/headers must be an object/);
    expect(refused({ headers: { "bad name": ["x"] } })).toMatch(/"bad name" is not a valid HTTP header name/);
    expect(refused({ headers: { a: "x" } })).toMatch(/headers\["a"\] must be an array of strings, not a string/);
    expect(refused({ headers: { a: [1] } })).toMatch(/it holds a number/);
    expect(refused({ headers: { a: ["x\r\nInjected: 1"] } })).toMatch(/control character/);
    expect(refused({ headers: { a: ["snowman ☃"] } })).toMatch(/above U\+00FF/);
    expect(refused({ headers: { a: ["x".repeat(70_000)] } })).toMatch(/headers are larger than 65536 bytes/);
    expect(refused({ bodyBase64: "AAE" })).toMatch(/either body or bodyBase64/);
    expect(refused({ body: undefined, bodyBase64: "AAE" })).toMatch(/not valid base64/);
    expect(refused({ body: undefined, bodyBase64: 5 })).toMatch(/bodyBase64 must be a string/);
    expect(refused({ body: "x".repeat(10 * 1024 * 1024 + 1) })).toMatch(/body is larger than 10485760 bytes/);
    expect(refused({ header: {} })).toMatch(/unknown field "header"/);
  });
});
