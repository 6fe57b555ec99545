import { describe, it, expect } from "vitest";
import { isUuid, uuidV7Time } from "@whc/ids";
import { createStamper } from "./ids.js";

describe("commit stamper", () => {
  it("hands out strictly increasing (receivedAt, id) pairs within one millisecond", () => {
    const stamp = createStamper(0, () => 1_700_000_000_000);
    const stamps = Array.from({ length: 1000 }, stamp);
    for (let i = 1; i < stamps.length; i += 1) {
      const [a, b] = [stamps[i - 1]!, stamps[i]!];
      expect(b.receivedAt).toBe(a.receivedAt);
      expect(b.id > a.id).toBe(true);
    }
    expect(stamps.every((s) => isUuid(s.id) && uuidV7Time(s.id) === s.receivedAt)).toBe(true);
  });

  it("never goes back when the wall clock does, nor below the stored floor", () => {
    const times = [5000, 4000, 6000];
    const stamp = createStamper(4500, () => times.shift() ?? 0);
    const [a, b, c] = [stamp(), stamp(), stamp()];
    expect(a.receivedAt).toBe(5000);
    expect(b.receivedAt).toBe(5000);
    expect(b.id > a.id).toBe(true);
    expect(c.receivedAt).toBe(6000);
    expect(createStamper(9000, () => 1)().receivedAt).toBe(9000);
  });
});
