import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { v7 } from "uuid";
import { isUuid, uuidV7Time } from "@whc/ids";
import { nextStamp } from "./ids.js";
import type { Stamp } from "./types.js";

const after = (a: Stamp, b: Stamp) => b.receivedAt > a.receivedAt || (b.receivedAt === a.receivedAt && b.id > a.id);

describe("per-endpoint stamps", () => {
  it("hands out strictly increasing (receivedAt, id) pairs within one millisecond", () => {
    let last: Stamp | undefined;
    const stamps = Array.from({ length: 1000 }, () => (last = nextStamp(last?.id, 1_700_000_000_000)));
    for (let i = 1; i < stamps.length; i += 1) {
      const [a, b] = [stamps[i - 1]!, stamps[i]!];
      expect(b.receivedAt).toBe(a.receivedAt);
      expect(b.id > a.id).toBe(true);
    }
    expect(stamps.every((s) => isUuid(s.id) && uuidV7Time(s.id) === s.receivedAt)).toBe(true);
  });

  it("never goes back when the clock does", () => {
    const a = nextStamp(undefined, 5000);
    const b = nextStamp(a.id, 4000);
    const c = nextStamp(b.id, 6000);
    expect([a.receivedAt, b.receivedAt, c.receivedAt]).toEqual([5000, 5000, 6000]);
    expect(b.id > a.id && c.id > b.id).toBe(true);
  });

  it("moves to the next millisecond when the last one's counter is used up", () => {
    const full = v7({ msecs: 9000, seq: 0xffffffff });
    const next = nextStamp(full, 9000);
    expect(next.receivedAt).toBe(9001);
    expect(next.id > full).toBe(true);
  });

  it("follows any stamp, for any clock readings", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1_600_000_000_000, max: 1_600_000_000_050 }), { minLength: 2, maxLength: 200 }), (times) => {
        let last: Stamp | undefined;
        for (const t of times) {
          const s = nextStamp(last?.id, t);
          if (last) expect(after(last, s)).toBe(true);
          expect(s.receivedAt).toBe(Math.max(t, last?.receivedAt ?? 0));
          expect(uuidV7Time(s.id)).toBe(s.receivedAt);
          last = s;
        }
      }),
    );
  });
});
