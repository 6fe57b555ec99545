import { describe, it, expect } from "vitest";
import { childPath } from "./json-tree.js";

describe("the JSON tree's paths", () => {
  it("writes jq paths: names, indexes, and quoted odd keys", () => {
    expect(childPath("", "data")).toBe(".data");
    expect(childPath(".data", "object")).toBe(".data.object");
    expect(childPath("", 0)).toBe(".[0]");
    expect(childPath(".items", 0)).toBe(".items[0]");
    expect(childPath("", "odd key")).toBe('.["odd key"]');
    expect(childPath(".a", 'qu"ote')).toBe('.a["qu\\"ote"]');
  });
});
