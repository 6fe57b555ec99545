import { describe, it, expect } from "vitest";
import { AppError } from "@whc/errors";
import { createKeyRateLimiter, createKeySlots } from "./key-quotas.js";

function refusal(take: () => void): AppError {
  try {
    take();
  } catch (err) {
    if (AppError.is(err)) return err;
    throw err;
  }
  throw new Error("was not refused");
}

/** How many of `n` requests made at once get in. */
function admitted(take: () => void, n: number): number {
  let ok = 0;
  for (let i = 0; i < n; i += 1) {
    try {
      take();
      ok += 1;
    } catch {
      // refused
    }
  }
  return ok;
}

describe("the key's request rate (a token bucket per key)", () => {
  it("lets a burst of twice the rate through, then the rate, and refuses with the api_rate quota and Retry-After of at least 1 s", () => {
    const clock = { now: 1_000_000 };
    const limiter = createKeyRateLimiter(50, undefined, () => clock.now);
    expect(admitted(() => limiter.take("k1"), 150)).toBe(100);
    const err = refusal(() => limiter.take("k1"));
    expect(err.reason).toBe("quota_exceeded");
    expect(err.meta).toEqual({ quota: "api_rate", limit: 50, retryAfter: 1, reset: 1 });
    // 100 ms later: 5 more (50 a second).
    clock.now += 100;
    expect(admitted(() => limiter.take("k1"), 20)).toBe(5);
    // A second at the rate: 50 a second get in, whatever is asked.
    let total = 0;
    for (let i = 0; i < 10; i += 1) {
      clock.now += 100;
      total += admitted(() => limiter.take("k1"), 20);
    }
    expect(total).toBe(50);
  });

  it("counts each key on its own: one key's burst leaves another's whole", () => {
    const clock = { now: 0 };
    const limiter = createKeyRateLimiter(5, undefined, () => clock.now);
    expect(admitted(() => limiter.take("a"), 50)).toBe(10);
    expect(admitted(() => limiter.take("b"), 50)).toBe(10);
  });

  it("charges nothing for a refused request, so a client that waits Retry-After gets in", () => {
    const clock = { now: 0 };
    const limiter = createKeyRateLimiter(1, 1, () => clock.now);
    limiter.take("k");
    for (let i = 0; i < 100; i += 1) expect(refusal(() => limiter.take("k")).meta.retryAfter).toBe(1);
    clock.now += 1000;
    expect(() => limiter.take("k")).not.toThrow();
  });

  it("says how long until the next request is admitted, in whole seconds", () => {
    const clock = { now: 0 };
    const limiter = createKeyRateLimiter(1, 3, () => clock.now);
    expect(admitted(() => limiter.take("k"), 3)).toBe(3);
    clock.now += 200;
    expect(refusal(() => limiter.take("k")).meta.retryAfter).toBe(1);
  });

  it("forgets buckets that refilled, so idle keys hold no memory", () => {
    const clock = { now: 0 };
    const limiter = createKeyRateLimiter(10, undefined, () => clock.now);
    for (let i = 0; i < 1000; i += 1) limiter.take(`key-${i}`);
    expect(limiter.size()).toBe(1000);
    clock.now += 61_000;
    limiter.take("late");
    expect(limiter.size()).toBe(1);
  });
});

describe("the key's slots (wait long polls held at once)", () => {
  it("refuses one more than the limit with the quota's name, its limit and Retry-After 1, and takes again after a release", () => {
    const slots = createKeySlots("waits", 2);
    slots.acquire("k");
    slots.acquire("k");
    const err = refusal(() => slots.acquire("k"));
    expect(err.reason).toBe("quota_exceeded");
    expect(err.meta).toEqual({ quota: "waits", limit: 2, retryAfter: 1 });
    expect(() => slots.acquire("other")).not.toThrow();
    slots.release("k");
    expect(slots.held("k")).toBe(1);
    expect(() => slots.acquire("k")).not.toThrow();
    slots.release("k");
    slots.release("k");
    expect(slots.held("k")).toBe(0);
  });
});
