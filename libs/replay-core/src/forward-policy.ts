import type { DeliveryState } from "@whc/api-model";
import type { NetworkFailure } from "@whc/egress-guard";

/** What one forward attempt came to. `refused`: nothing was sent. */
export type AttemptOutcome =
  | { kind: "response"; status: number; retryAfterMs?: number | undefined }
  | { kind: "network_error"; reason: NetworkFailure }
  | { kind: "refused"; reason: "target_not_allowed" | "egress_capacity_exhausted" }
  /** The stored body could not be opened (its data key is gone, or it fails its tag). */
  | { kind: "unsendable" }
  /** Every attempt number up to maxAttempts was claimed, and none of the last ones recorded: their sender stopped. */
  | { kind: "interrupted" }
  /** The destination's transform threw, ran out of time or memory, or returned no request (design §17). */
  | { kind: "transform_failed"; message: string }
  /** The destination's transform answered null: nothing is sent, the delivery is skipped. */
  | { kind: "skipped" };

/** The metrics' closed outcome set. */
export const ATTEMPT_OUTCOMES = ["delivered", "rejected", "network_error", "refused", "skipped", "transform_failed"] as const;
export type AttemptOutcomeLabel = (typeof ATTEMPT_OUTCOMES)[number];

export const HOUR_MS = 3_600_000;
/** A retry is never put off longer than this, however many attempts came before. */
export const MAX_RETRY_DELAY_MS = 24 * HOUR_MS;

export function isSuccess(outcome: AttemptOutcome): boolean {
  return outcome.kind === "response" && outcome.status >= 200 && outcome.status < 300;
}

export function outcomeLabel(outcome: AttemptOutcome): AttemptOutcomeLabel {
  if (outcome.kind === "response") return isSuccess(outcome) ? "delivered" : "rejected";
  if (outcome.kind === "network_error") return "network_error";
  if (outcome.kind === "skipped" || outcome.kind === "transform_failed") return outcome.kind;
  return "refused";
}

/** The attempt's `error` as recorded: "" for an answer. */
export function errorOf(outcome: AttemptOutcome): string {
  switch (outcome.kind) {
    case "response":
      return "";
    case "network_error":
    case "refused":
      return outcome.reason;
    case "interrupted":
      return "interrupted";
    case "transform_failed":
      return "transform_failed";
    case "skipped":
      return "";
    case "unsendable":
      // No ATTEMPT_ERRORS entry says "the stored bytes are unreadable"; nothing went out, and
      // protocol_error is the nearest truthful word for a request that could not be formed.
      return "protocol_error";
  }
}

/**
 * Design §11: network errors, 408, 429 and 5xx are retried, and so is a send that found no
 * egress capacity (a passing condition). Any other answer, a refused target and an unreadable
 * body are final.
 */
export function isRetryable(outcome: AttemptOutcome): boolean {
  if (outcome.kind === "network_error") return true;
  if (outcome.kind === "refused") return outcome.reason === "egress_capacity_exhausted";
  if (outcome.kind === "unsendable" || outcome.kind === "interrupted" || outcome.kind === "transform_failed" || outcome.kind === "skipped") return false;
  // 508 Loop Detected (ingest's forward_loop, design §14) will not pass by trying again.
  return outcome.status === 408 || outcome.status === 429 || (outcome.status >= 500 && outcome.status !== 508);
}

/** base * 3^(n-1), +-20 % jitter: the delay after attempt n failed. */
export function retryDelayMs(n: number, baseMs: number, random: () => number = Math.random): number {
  const nominal = Math.min(baseMs * 3 ** Math.max(0, n - 1), MAX_RETRY_DELAY_MS);
  return Math.round(nominal * (0.8 + 0.4 * random()));
}

/** Retry-After as delta seconds or an HTTP date, in ms from now (0 at least, 1 h at most). */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  let ms: number;
  if (/^\d+$/.test(text)) ms = Number(text) * 1000;
  else {
    const at = Date.parse(text);
    if (Number.isNaN(at)) return undefined;
    ms = at - nowMs;
  }
  return Math.min(Math.max(0, ms), HOUR_MS);
}

export interface Verdict {
  state: DeliveryState;
  /** Set with `pending`: when the next attempt is due. */
  nextAttemptAt?: number | undefined;
}

/**
 * The outbox worker's verdict after attempt n: 2xx delivered; a retryable outcome pending
 * again after the backoff (a 429's Retry-After instead, up to 1 h) until n reaches
 * maxAttempts, then exhausted; anything else failed.
 */
export function workerVerdict(
  outcome: AttemptOutcome,
  n: number,
  maxAttempts: number,
  policy: { retryBaseMs: number; nowMs: number; random?: () => number },
): Verdict {
  if (isSuccess(outcome)) return { state: "delivered" };
  if (outcome.kind === "skipped") return { state: "skipped" };
  if (!isRetryable(outcome)) return { state: "failed" };
  if (n >= maxAttempts) return { state: "exhausted" };
  const asked = outcome.kind === "response" && outcome.status === 429 ? outcome.retryAfterMs : undefined;
  const delay = asked ?? retryDelayMs(n, policy.retryBaseMs, policy.random);
  return { state: "pending", nextAttemptAt: policy.nowMs + delay };
}

/**
 * What a direct attempt (proxy, manual, cli) does to the delivery, as the catalog applies it:
 * a 2xx delivers it; otherwise one waiting in the outbox keeps waiting, any other fails.
 * Used only to answer when the catalog could not be told.
 */
export function directState(outcome: AttemptOutcome, before: { state: string; waiting: boolean } | undefined): DeliveryState {
  if (isSuccess(outcome)) return "delivered";
  if (before?.state === "pending" && before.waiting) return "pending";
  return outcome.kind === "skipped" ? "skipped" : "failed";
}

export function isFinal(state: string): state is "delivered" | "failed" | "exhausted" | "skipped" {
  return state === "delivered" || state === "failed" || state === "exhausted" || state === "skipped";
}
