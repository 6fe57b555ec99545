import { describe, it, expect } from "vitest";
import { bytesOf, duration, exactTime, hexDump, parseJson, plural, relativeTime, size } from "./format.js";

describe("dashboard formatting", () => {
  it("dumps bytes as hex with printable characters, in fixed columns", () => {
    const dump = hexDump(Uint8Array.from([0x00, 0x41, 0xff, 0x0a]));
    expect(dump).toBe(`00000000  ${"00 41 ff 0a".padEnd(47)}  .A..`);
    const two = hexDump(new Uint8Array(20)).split("\n");
    expect(two.map((l) => l.length)).toEqual([75, 63]);
    expect(hexDump(new Uint8Array(40), 32).split("\n").at(-1)).toBe("… 8 more bytes");
  });

  it("decodes base64 bodies to their exact bytes and parses JSON only", () => {
    expect([...bytesOf("AP8=", "base64")]).toEqual([0, 255]);
    expect([...bytesOf("é", "utf8")]).toEqual([0xc3, 0xa9]);
    expect(parseJson('{"a":1}')).toEqual({ ok: true, value: { a: 1 } });
    expect(parseJson("not json")).toEqual({ ok: false });
  });

  it("writes sizes in human units and counts with correct plurals", () => {
    expect([size(141), size(2048), size(1536), size(150 * 1024), size(3 * 1024 * 1024)]).toEqual(["141 B", "2 KiB", "1.5 KiB", "150 KiB", "3 MiB"]);
    expect([plural(0, "event"), plural(1, "event"), plural(2, "event"), plural(1204, "event")]).toEqual(["0 events", "1 event", "2 events", "1,204 events"]);
    expect(plural(1, "entry", "entries")).toBe("1 entry");
    expect([duration(840), duration(2400), duration(180_000)]).toEqual(["840 ms", "2.4 s", "3 min"]);
  });

  it("says how long ago, and gives the exact instant in UTC", () => {
    const now = Date.parse("2026-11-26T18:50:00.000Z");
    const ago = (s: number) => relativeTime(new Date(now - s * 1000).toISOString(), now);
    expect([ago(2), ago(12), ago(185), ago(2 * 3600 + 5), ago(3 * 86400), ago(-120)]).toEqual(["just now", "12 s ago", "3 min ago", "2 h ago", "3 d ago", "in 2 min"]);
    expect(exactTime("2026-11-26T19:46:50.428+01:00")).toBe("2026-11-26T18:46:50.428Z");
  });
});
