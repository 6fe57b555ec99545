import { describe, it, expect } from "vitest";
import { secondsToUtcMidnight, utcDay } from "./allowance.js";

describe("the daily allowance clock", () => {
  it("counts per UTC day", () => {
    expect(utcDay(Date.UTC(2026, 10, 22, 23, 59, 59))).toBe("2026-11-22");
    expect(utcDay(Date.UTC(2026, 10, 23, 0, 0, 0))).toBe("2026-11-23");
  });

  it("resets at the next UTC midnight, never in zero seconds", () => {
    expect(secondsToUtcMidnight(Date.UTC(2026, 10, 22, 23, 59, 0))).toBe(60);
    expect(secondsToUtcMidnight(Date.UTC(2026, 10, 22, 0, 0, 0))).toBe(86_400);
    expect(secondsToUtcMidnight(Date.UTC(2026, 10, 22, 23, 59, 59, 999))).toBe(1);
  });
});
