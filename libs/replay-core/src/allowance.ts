const DAY_MS = 86_400_000;

/** The UTC day a replay counts against, YYYY-MM-DD. */
export function utcDay(nowMs: number): string {
  return new Date(nowMs).toISOString().slice(0, 10);
}

/** Whole seconds until the next UTC midnight (at least 1): Retry-After and RateLimit-Reset. */
export function secondsToUtcMidnight(nowMs: number): number {
  const next = Math.floor(nowMs / DAY_MS) * DAY_MS + DAY_MS;
  return Math.max(1, Math.ceil((next - nowMs) / 1000));
}
