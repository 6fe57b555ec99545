import { AppError } from "@whc/errors";
import type { ListenerRecord } from "./types.js";

/**
 * A listener's lag run after a heartbeat that counted `lag` events behind: it goes on while the
 * lag never falls, and starts again now when the lag falls or is 0, and for a listener heard
 * from for the first time.
 */
export function nextLagRun(previous: ListenerRecord | undefined, lag: number, now: number): Pick<ListenerRecord, "lagRunSince"> {
  if (!previous || lag === 0 || lag < previous.lagEvents) return { lagRunSince: now };
  return { lagRunSince: previous.lagRunSince };
}

/**
 * listener.stalled (design §19, "a listener whose lag grows"; ADR 0062): behind at every
 * heartbeat for at least `stallMs` without the lag ever falling. A listener that delivers, even
 * far behind, brings its lag down now and then; one stuck on an event (its local app down)
 * never does, whether new captures arrive or not.
 */
export function isStalled(listener: ListenerRecord, stallMs: number): boolean {
  return listener.lagEvents > 0 && listener.lastSeenAt - listener.lagRunSince >= stallMs;
}

/** The refusal of one listener too many on an endpoint: 429 quota_exceeded, `details: {quota: "listeners", limit}`. */
export function listenerQuotaExceeded(limit: number): AppError {
  return new AppError("quota_exceeded", "listeners of the endpoint at their limit", { meta: { quota: "listeners", limit } });
}
