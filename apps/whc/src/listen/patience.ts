import { ApiError } from "@whc/api-model";

/** How long to wait between tries while the API is unreachable or unavailable. */
export const BACKOFF = { initialMs: 1000, maxMs: 15_000 };

export interface Patience {
  /** Aborted: stop waiting (the call in flight finishes or fails first). */
  signal: AbortSignal;
  /** Told before each pause after a transient failure. */
  onRetry(error: ApiError, delayMs: number): void;
  /** Told when a call is answered (after failures or not). */
  onAnswer?(): void;
  backoff?: { initialMs: number; maxMs: number };
}

/** Thrown when `signal` ended the wait for an answer. */
export class Stopped extends Error {
  constructor() {
    super("stopped");
    this.name = "Stopped";
  }
}

export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Stopped());
    const timer = setTimeout(done, ms);
    function done() {
      signal.removeEventListener("abort", stop);
      resolve();
    }
    function stop() {
      clearTimeout(timer);
      reject(new Stopped());
    }
    signal.addEventListener("abort", stop, { once: true });
  });
}

/**
 * `work` until it answers: transient API failures (unreachable, 502, 503, 504) are tried again
 * after a pause that doubles up to `backoff.maxMs`, as the client's follow() does; any other
 * failure is thrown. Throws Stopped when `signal` ends a pause.
 */
export async function patiently<T>(work: () => Promise<T>, p: Patience): Promise<T> {
  const backoff = p.backoff ?? BACKOFF;
  let delay = backoff.initialMs;
  for (;;) {
    try {
      const answer = await work();
      p.onAnswer?.();
      return answer;
    } catch (err) {
      if (!ApiError.is(err) || !err.transient) {
        if (ApiError.is(err) && err.status > 0) p.onAnswer?.();
        throw err;
      }
      p.onRetry(err, delay);
      await pause(delay, p.signal);
      delay = Math.min(delay * 2, backoff.maxMs);
    }
  }
}
