import { describe, expect, it } from "vitest";
import { topLevelNumber } from "./json-number.js";

const read = (text: string, name = "webhookTimestamp") => topLevelNumber(Buffer.from(text), name);

describe("topLevelNumber", () => {
  it("reads a top-level number wherever it is", () => {
    expect(read('{"webhookTimestamp":1676056940508}')).toBe(1676056940508);
    expect(read('{"a":{"webhookTimestamp":1},"b":[1,{"x":"}"}],"webhookTimestamp": 2 }')).toBe(2);
    expect(read('\ufeff {"webhookTimestamp":-1.5e3}')).toBe(-1500);
    expect(read('{"web\\u0068ookTimestamp":7}')).toBe(7);
  });

  it("lets a later duplicate win, as JSON.parse does", () => {
    expect(read('{"webhookTimestamp":1,"webhookTimestamp":2}')).toBe(2);
  });

  it("answers undefined for anything that is not a top-level number", () => {
    expect(read('{"data":{"webhookTimestamp":1}}')).toBeUndefined();
    expect(read('{"webhookTimestamp":"1"}')).toBeUndefined();
    expect(read('{"webhookTimestamp":null}')).toBeUndefined();
    expect(read('{"webhookTimestamp":01}')).toBeUndefined();
    expect(read("[1]")).toBeUndefined();
    expect(read("")).toBeUndefined();
    expect(read('{"webhookTimestamp":')).toBeUndefined();
  });
});
