import { describe, expect, it } from "vitest";
import { directState, isRetryable, parseRetryAfter, retryDelayMs, workerVerdict, type AttemptOutcome } from "./forward-policy.js";
import { targetUrl } from "@whc/api-model";
import { destinationSettingsOf } from "@whc/api-model/present";

const answer = (status: number, retryAfterMs?: number): AttemptOutcome => ({ kind: "response", status, retryAfterMs });
const policy = { retryBaseMs: 10_000, nowMs: 1_000_000, random: () => 0.5 };

describe("the relay's retry rules (design §11)", () => {
  it("delivers on 2xx, fails on other 4xx and 3xx, retries network errors, 408, 429 and 5xx", () => {
    expect(workerVerdict(answer(200), 1, 6, policy)).toEqual({ state: "delivered" });
    expect(workerVerdict(answer(204), 3, 6, policy)).toEqual({ state: "delivered" });
    for (const status of [400, 401, 404, 410, 422, 301, 302]) expect(workerVerdict(answer(status), 1, 6, policy)).toEqual({ state: "failed" });
    for (const outcome of [answer(408), answer(429), answer(500), answer(503), { kind: "network_error", reason: "timeout" } as const]) {
      expect(workerVerdict(outcome, 1, 6, policy)).toEqual({ state: "pending", nextAttemptAt: policy.nowMs + 10_000 });
    }
    expect(isRetryable({ kind: "refused", reason: "egress_capacity_exhausted" })).toBe(true);
    expect(isRetryable({ kind: "refused", reason: "target_not_allowed" })).toBe(false);
    expect(isRetryable({ kind: "unsendable" })).toBe(false);
  });

  it("exhausts a retryable failure at maxAttempts", () => {
    expect(workerVerdict(answer(503), 5, 6, policy).state).toBe("pending");
    expect(workerVerdict(answer(503), 6, 6, policy)).toEqual({ state: "exhausted" });
    expect(workerVerdict(answer(503), 1, 1, policy)).toEqual({ state: "exhausted" });
    // A number past maxAttempts (claims lost to crashes) ends it too.
    expect(workerVerdict({ kind: "network_error", reason: "connection_reset" }, 8, 6, policy)).toEqual({ state: "exhausted" });
    expect(workerVerdict(answer(404), 6, 6, policy)).toEqual({ state: "failed" });
  });

  it("waits base x3^(n-1) with +-20 % jitter: 10 s, 30 s, 90 s, 270 s, 810 s", () => {
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(n, 10_000, () => 0.5))).toEqual([10_000, 30_000, 90_000, 270_000, 810_000]);
    expect(retryDelayMs(1, 10_000, () => 0)).toBe(8_000);
    expect(retryDelayMs(1, 10_000, () => 1)).toBe(12_000);
    expect(retryDelayMs(2, 20, () => 0.999)).toBeLessThanOrEqual(72);
    // However long the series, a retry is due within a day.
    expect(retryDelayMs(20, 10_000, () => 1)).toBeLessThanOrEqual(24 * 3_600_000 * 1.2);
  });

  it("honours a 429's Retry-After (seconds or a date) up to 1 h, instead of the backoff", () => {
    expect(workerVerdict(answer(429, 0), 1, 6, policy)).toEqual({ state: "pending", nextAttemptAt: policy.nowMs });
    expect(workerVerdict(answer(429, 1000), 1, 6, policy)).toEqual({ state: "pending", nextAttemptAt: policy.nowMs + 1000 });
    // Only a 429's: a 503's Retry-After is not the design's.
    expect(workerVerdict(answer(503, 1000), 1, 6, policy)).toEqual({ state: "pending", nextAttemptAt: policy.nowMs + 10_000 });
    expect(parseRetryAfter("0", 0)).toBe(0);
    expect(parseRetryAfter(" 2 ", 0)).toBe(2000);
    expect(parseRetryAfter("86400", 0)).toBe(3_600_000);
    expect(parseRetryAfter(new Date(60_000).toUTCString(), 0)).toBe(60_000);
    expect(parseRetryAfter(new Date(0).toUTCString(), 60_000)).toBe(0);
    expect(parseRetryAfter("soon", 0)).toBeUndefined();
    expect(parseRetryAfter(undefined, 0)).toBeUndefined();
    expect(parseRetryAfter(["5", "7"], 0)).toBe(5000);
  });

  it("knows what a direct attempt does when the catalog could not be told", () => {
    expect(directState(answer(200), undefined)).toBe("delivered");
    expect(directState(answer(500), { state: "pending", waiting: true })).toBe("pending");
    expect(directState(answer(500), { state: "pending", waiting: false })).toBe("failed");
    expect(directState(answer(500), { state: "delivered", waiting: false })).toBe("failed");
  });
});

describe("the forward URL", () => {
  const at = (url: string, rest: string, keepPath = true) => targetUrl({ url, keepPath }, rest);

  it("appends the capture's sub-path and query when keepPath", () => {
    expect(at("https://app.example/hooks", "/ci")).toBe("https://app.example/hooks/ci");
    expect(at("https://app.example/hooks/", "/ci?x=1&y=%20")).toBe("https://app.example/hooks/ci?x=1&y=%20");
    expect(at("https://app.example", "/ci")).toBe("https://app.example/ci");
    expect(at("https://app.example/", "")).toBe("https://app.example/");
    expect(at("https://app.example/hooks", "?x=1")).toBe("https://app.example/hooks?x=1");
    expect(at("https://app.example/hooks?token=a", "/ci?x=1")).toBe("https://app.example/hooks/ci?token=a&x=1");
    expect(at("https://app.example/hooks?token=a", "")).toBe("https://app.example/hooks?token=a");
    expect(at("https://app.example/hooks#frag", "/ci")).toBe("https://app.example/hooks/ci");
    expect(at("https://app.example/hooks", "/a%2Fb/%C3%A9")).toBe("https://app.example/hooks/a%2Fb/%C3%A9");
  });

  it("leaves the destination alone without keepPath", () => {
    expect(at("https://app.example/hooks?token=a", "/ci?x=1", false)).toBe("https://app.example/hooks?token=a");
  });

  it("reads the stored settings with their defaults, and a bad one as none", () => {
    expect(destinationSettingsOf('{"url":"https://app.example/h"}')).toEqual({ url: "https://app.example/h", keepPath: true, timeoutMs: 10_000, maxAttempts: 6 });
    expect(destinationSettingsOf('{"url":"https://a.example","keepPath":false,"timeoutMs":200,"maxAttempts":3}')).toMatchObject({ keepPath: false, timeoutMs: 200, maxAttempts: 3 });
    expect(destinationSettingsOf("")).toBeUndefined();
    expect(destinationSettingsOf("{")).toBeUndefined();
    expect(destinationSettingsOf('{"url":""}')).toBeUndefined();
  });
});
