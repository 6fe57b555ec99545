import { describe, it, expect } from "vitest";
import { bytesOf, hexDump, prettyJson, size } from "./format.js";

describe("dashboard formatting", () => {
  it("dumps bytes as hex with printable characters", () => {
    const dump = hexDump(Uint8Array.from([0x00, 0x41, 0xff, 0x0a]));
    expect(dump).toBe(`00000000  ${"00 41 ff 0a".padEnd(47)}  .A..`);
  });

  it("decodes base64 bodies to their exact bytes and pretty-prints JSON only", () => {
    expect([...bytesOf("AP8=", "base64")]).toEqual([0, 255]);
    expect([...bytesOf("é", "utf8")]).toEqual([0xc3, 0xa9]);
    expect(prettyJson('{"a":1}')).toBe('{\n  "a": 1\n}');
    expect(prettyJson("not json")).toBeUndefined();
    expect(size(2048)).toBe("2.0 KiB");
  });
});
