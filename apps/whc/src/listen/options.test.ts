import { describe, it, expect } from "vitest";
import { durationArgument, durationText, resignArgument, resignModeOf, sinceArgument } from "./options.js";
import { idBefore } from "../commands/listen.js";

describe("the options of whc listen", () => {
  it("reads --retry-for durations up to a day, and refuses the rest", () => {
    expect([durationArgument("0"), durationArgument("1500ms"), durationArgument("30s"), durationArgument("5m"), durationArgument("2h")]).toEqual([
      0, 1500, 30_000, 300_000, 7_200_000,
    ]);
    for (const bad of ["", "5", "-1s", "1.5s", "25h", "5 m", "m"]) expect(() => durationArgument(bad), bad).toThrow(/a duration up to 24h/);
  });

  it("prints durations as people read them", () => {
    expect([800, 1000, 1500, 1512, 10_400, 90_000, 300_000, 3_723_000].map(durationText)).toEqual(["800ms", "1s", "1.5s", "1.5s", "10s", "1m30s", "5m", "1h2m3s"]);
  });

  it("reads --resign's modes, --resign alone as stale and --no-resign as never", () => {
    expect(resignArgument("always")).toBe("always");
    expect(() => resignArgument("sometimes")).toThrow(/stale, always, never/);
    expect([resignModeOf(undefined), resignModeOf(true), resignModeOf(false), resignModeOf("always")]).toEqual(["stale", "stale", "never", "always"]);
  });

  it("reads --since as a duration ago, an ISO time or an event id", () => {
    const { at } = sinceArgument("2h") as { at: string };
    expect(Math.abs(Date.now() - 7_200_000 - Date.parse(at))).toBeLessThan(5000);
    expect(sinceArgument("2026-11-26T10:00:00Z")).toEqual({ at: "2026-11-26T10:00:00.000Z" });
    expect(sinceArgument("019A6B2E-5C3D-7E41-9A2B-3C4D5E6F7A8B")).toEqual({ eventId: "019a6b2e-5c3d-7e41-9a2b-3c4d5e6f7a8b" });
    expect(() => sinceArgument("yesterday")).toThrow(/an event id/);
  });

  it("starts --since <eventId> at the largest id below the event's", () => {
    expect(idBefore("019a6b2e-5c3d-7e41-9a2b-3c4d5e6f7a8b")).toBe("019a6b2e-5c3d-7e41-9a2b-3c4d5e6f7a8a");
    expect(idBefore("019a6b2e-5c3d-7e41-9a2b-3c4d5e6f7a00")).toBe("019a6b2e-5c3d-7e41-9a2b-3c4d5e6f79ff");
    expect(idBefore("019a6b2e-5c3d-7e41-9a2b-000000000000")).toBe("019a6b2e-5c3d-7e41-9a2a-ffffffffffff");
  });
});
