import fc from "fast-check";
import { describe, it, expect } from "vitest";
import { v7 } from "uuid";
import { isUuid, newId, uuidV7At, uuidV7Seq, uuidV7Time } from "./uuid.js";

describe("ids", () => {
  it("recognises UUIDs of either case and nothing else", () => {
    expect(isUuid("01a20000-0000-7000-8000-0000000000aa")).toBe(true);
    expect(isUuid("01A20000-0000-7000-8000-0000000000AA")).toBe(true);
    expect(isUuid("01a20000-0000-7000-8000-0000000000a")).toBe(false);
    expect(isUuid("01a20000-0000-7000-8000-0000000000aa/x")).toBe(false);
    expect(isUuid("01a200000000700080000000000000aa")).toBe(false);
    expect(isUuid("not-an-id")).toBe(false);
    expect(isUuid("")).toBe(false);
  });

  it("hands out increasing UUIDv7s that carry the time they were made", () => {
    const before = Date.now();
    const ids = Array.from({ length: 1000 }, newId);
    const after = Date.now();
    for (let i = 1; i < ids.length; i += 1) expect(ids[i]! > ids[i - 1]!).toBe(true);
    expect(ids.every((id) => isUuid(id) && id[14] === "7")).toBe(true);
    const ms = uuidV7Time(ids[0]!);
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(after);
  });

  it("reads the millisecond of a known UUIDv7", () => {
    // 0x018bcfe56800 = 1,700,000,000,000 ms.
    expect(uuidV7Time("018bcfe5-6800-7000-8000-000000000000")).toBe(1_700_000_000_000);
  });

  it("reads back the counter a UUIDv7 was made with", () => {
    for (const seq of [0, 1, 63, 64, 0x3fff, 0x4000, 0x0fffffff, 0x10000000, 0x7fffffff, 0xffffffff]) {
      expect(uuidV7Seq(v7({ msecs: 1_700_000_000_000, seq }))).toBe(seq);
    }
  });

  it("writes a stamp's UUIDv7 exactly as the uuid package does, and reads its millisecond and counter back", () => {
    const ms = fc.oneof(fc.integer({ min: 0, max: 2 ** 48 - 1 }), fc.constantFrom(0, 1, 255, 256, 2 ** 32 - 1, 2 ** 32, 2 ** 40, 2 ** 48 - 1, 1_700_000_000_000));
    const seq = fc.oneof(fc.integer({ min: 0, max: 0xffffffff }), fc.constantFrom(0, 1, 63, 64, 0x3fff, 0x4000, 0x0fffffff, 0x10000000, 0xffffffff));
    fc.assert(
      fc.property(ms, seq, fc.uint8Array({ minLength: 16, maxLength: 16 }), (msecs, counter, random) => {
        const id = uuidV7At(msecs, counter, random.subarray(10));
        expect(id).toBe(v7({ msecs, seq: counter, random }));
        expect(uuidV7Time(id)).toBe(msecs);
        expect(uuidV7Seq(id)).toBe(counter);
        // Upper case reads the same.
        expect(uuidV7Time(id.toUpperCase())).toBe(msecs);
        expect(uuidV7Seq(id.toUpperCase())).toBe(counter);
      }),
      { numRuns: 2000 },
    );
  });

  it("draws a stamp's random part from the CSPRNG: two stamps of one millisecond and counter differ", () => {
    const ids = new Set(Array.from({ length: 2000 }, () => uuidV7At(1_700_000_000_000, 5)));
    expect(ids.size).toBe(2000);
    for (const id of ids) expect(isUuid(id) && uuidV7Seq(id) === 5 && uuidV7Time(id) === 1_700_000_000_000).toBe(true);
  });
});
