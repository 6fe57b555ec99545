import { AppError } from "@whc/errors";

/**
 * The quotas a gateway process keeps per API key, in memory (ADR 0035): the request rate, a
 * token bucket per key, and the number of `wait` long polls it holds at once. Neither makes
 * any call: a request pays a Map lookup and a little arithmetic.
 */

/** How often buckets that refilled to the brim are dropped (a full bucket is the same as none). */
const SWEEP_INTERVAL_MS = 60_000;

export interface KeyRateLimiter {
  /** Takes one request from the key's bucket; past the rate, throws 429 `quota_exceeded` (api_rate). */
  take(keyId: string): void;
  /** Buckets held now (for tests: the idle ones go). */
  size(): number;
}

/**
 * A token bucket per key: `ratePerS` tokens a second, holding at most `burst`; a request takes
 * one. A refused request takes nothing, so a client that waits Retry-After gets in.
 */
export function createKeyRateLimiter(ratePerS: number, burst = 2 * ratePerS, clock: () => number = Date.now): KeyRateLimiter {
  const buckets = new Map<string, { tokens: number; at: number }>();
  const perMs = ratePerS / 1000;
  let sweptAt = clock();

  function sweep(now: number): void {
    sweptAt = now;
    for (const [keyId, b] of buckets) if (b.tokens + (now - b.at) * perMs >= burst) buckets.delete(keyId);
  }

  return {
    take(keyId) {
      const now = clock();
      if (now - sweptAt >= SWEEP_INTERVAL_MS) sweep(now);
      const b = buckets.get(keyId);
      if (!b) {
        buckets.set(keyId, { tokens: burst - 1, at: now });
        return;
      }
      b.tokens = Math.min(burst, b.tokens + Math.max(now - b.at, 0) * perMs);
      b.at = now;
      if (b.tokens >= 1) {
        b.tokens -= 1;
        return;
      }
      // Whole seconds until the next token, at least 1 (Retry-After has no fractions).
      const retryAfter = Math.max(1, Math.ceil((1 - b.tokens) / perMs / 1000));
      throw new AppError("quota_exceeded", "API request rate of the key spent", {
        meta: { quota: "api_rate", limit: ratePerS, retryAfter, reset: retryAfter },
      });
    },
    size: () => buckets.size,
  };
}

export interface KeySlots {
  /** Takes one of the key's slots; when all are taken, throws 429 `quota_exceeded` (`quota`). */
  acquire(keyId: string): void;
  release(keyId: string): void;
  /** Slots taken now by the key. */
  held(keyId: string): number;
}

/** At most `limit` of something at once per key (`wait` long polls), refused as `quota`. */
export function createKeySlots(quota: string, limit: number): KeySlots {
  const taken = new Map<string, number>();
  return {
    acquire(keyId) {
      const n = taken.get(keyId) ?? 0;
      if (n >= limit) {
        throw new AppError("quota_exceeded", `${quota} of the key all taken`, { meta: { quota, limit, retryAfter: 1 } });
      }
      taken.set(keyId, n + 1);
    },
    release(keyId) {
      const n = (taken.get(keyId) ?? 0) - 1;
      if (n > 0) taken.set(keyId, n);
      else taken.delete(keyId);
    },
    held: (keyId) => taken.get(keyId) ?? 0,
  };
}
