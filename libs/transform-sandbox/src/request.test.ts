import { describe, expect, it } from "vitest";
import { fromTransformRequest, toTransformRequest, type CapturedRequestParts } from "./request.js";

const utf8 = (s: string) => new TextEncoder().encode(s);
const parts = (over: Partial<CapturedRequestParts> = {}): CapturedRequestParts => ({
  method: "POST",
  path: "/hooks/a",
  query: "x=1&y=%20",
  headers: [["Content-Type", "application/json"]],
  body: utf8('{"a":1}'),
  ...over,
});

describe("toTransformRequest", () => {
  it("gives method, path, raw query, lower-case headers with every value in order, and a parsed JSON body", () => {
    const req = toTransformRequest(
      parts({ headers: [["X-Tag", "one"], ["Content-Type", "application/json"], ["x-tag", "two"]], body: utf8('{"a":[1,2],"b":"c"}') }),
    );
    expect(req).toEqual({
      method: "POST",
      path: "/hooks/a",
      query: "x=1&y=%20",
      headers: { "x-tag": ["one", "two"], "content-type": ["application/json"] },
      body: { a: [1, 2], b: "c" },
    });
  });

  it("takes headers as a record too, and reads an empty sub-path as / and drops a leading ? from the query", () => {
    const req = toTransformRequest(parts({ path: "", query: "?q=1", headers: { "X-A": ["1", "2"] } }));
    expect(req.path).toBe("/");
    expect(req.query).toBe("q=1");
    expect(req.headers).toEqual({ "x-a": ["1", "2"] });
  });

  it("keeps a header named __proto__ as a header", () => {
    const req = toTransformRequest(parts({ headers: [["__proto__", "x"]] }));
    expect(Object.keys(req.headers)).toEqual(["__proto__"]);
    expect(JSON.parse(JSON.stringify(req)).headers).toEqual(JSON.parse('{"__proto__":["x"]}'));
  });

  it("gives UTF-8 text that is not a JSON object or array as a string, and other bytes as base64", () => {
    expect(toTransformRequest(parts({ body: utf8("a=1&b=2") })).body).toBe("a=1&b=2");
    expect(toTransformRequest(parts({ body: utf8('"quoted"') })).body).toBe('"quoted"');
    expect(toTransformRequest(parts({ body: utf8("42") })).body).toBe("42");
    expect(toTransformRequest(parts({ body: utf8("{not json") })).body).toBe("{not json");
    expect(toTransformRequest(parts({ body: new Uint8Array(0) })).body).toBe("");
    const binary = toTransformRequest(parts({ body: new Uint8Array([0xff, 0x00, 0xfe]) }));
    expect(binary.body).toBeUndefined();
    expect(binary.bodyBase64).toBe("/wD+");
  });
});

describe("fromTransformRequest", () => {
  it("gives header pairs in order, a JSON body re-serialised, a string body as UTF-8, and a base64 body decoded", () => {
    const out = fromTransformRequest({ method: "PUT", path: "/x", query: "", headers: { a: ["1", "2"], b: ["3"] }, body: { é: 1 } });
    expect(out.headers).toEqual([["a", "1"], ["a", "2"], ["b", "3"]]);
    expect(Buffer.from(out.body).toString("utf8")).toBe('{"é":1}');
    expect(Buffer.from(fromTransformRequest({ method: "GET", path: "/", query: "", headers: {}, body: "plain ü" }).body).toString("utf8")).toBe("plain ü");
    expect([...fromTransformRequest({ method: "GET", path: "/", query: "", headers: {}, bodyBase64: "/wD+" }).body]).toEqual([0xff, 0x00, 0xfe]);
    expect(fromTransformRequest({ method: "GET", path: "/", query: "", headers: {} }).body.length).toBe(0);
  });

  it("round-trips any bytes exactly: binary, text with a byte order mark, and JSON given the original", () => {
    const bodies = [
      new Uint8Array(Array.from({ length: 256 }, (_, i) => i)),
      new Uint8Array([0xc3, 0x28, 0x00, 0x80]),
      Uint8Array.from(Buffer.from("\ufeffhello, wörld\r\n", "utf8")),
      utf8('{ "id": 12345678901234567890123, "n": 1.0, "s": "\\u00e9" }\n'),
      utf8("[1,\n 2]"),
    ];
    for (const body of bodies) {
      const req = toTransformRequest(parts({ body }));
      const sent = fromTransformRequest(JSON.parse(JSON.stringify(req)), body).body;
      expect(Buffer.from(sent).equals(Buffer.from(body))).toBe(true);
    }
    // Binary and text bodies need no original to come back exact.
    for (const body of bodies.slice(0, 3)) {
      const sent = fromTransformRequest(toTransformRequest(parts({ body }))).body;
      expect(Buffer.from(sent).equals(Buffer.from(body))).toBe(true);
    }
  });

  it("sends a changed JSON body as compact JSON, even when the original is given", () => {
    const body = utf8('{ "a": 1 }');
    const req = toTransformRequest(parts({ body }));
    (req.body as { a: number }).a = 2;
    expect(Buffer.from(fromTransformRequest(req, body).body).toString("utf8")).toBe('{"a":2}');
  });
});
