/**
 * The admission budget (design §13, WHC_INGEST_MAX_INFLIGHT_BYTES): the request-body bytes
 * ingest holds across every request in flight. A request reserves its declared length before
 * its body is read, a chunked one grows its reservation as its chunks arrive, and whatever
 * it holds goes back exactly once, however the request ends.
 */
export interface InflightBudget {
  /** The most bytes held at once. */
  readonly limit: number;
  /** Bytes held now. */
  held(): number;
  /** Reserves `bytes`, or nothing when that would pass the limit. */
  reserve(bytes: number): Reservation | undefined;
}

/** One request's share of the budget. */
export interface Reservation {
  /** Bytes this request holds. */
  readonly bytes: number;
  /** Holds `more` bytes as well; false (and nothing held in addition) when the budget has no room. */
  grow(more: number): boolean;
  /** Gives back all it holds; later calls do nothing (every way a request ends may call it). */
  release(): void;
}

export interface BudgetHooks {
  /** Called when the budget is empty again after a burst: since the last call it was at least half used, or it refused a request. */
  afterBurst?: () => void;
  /** Called with the bytes each reservation gives back, as it gives them back. */
  released?: (bytes: number) => void;
}

export function createInflightBudget(limit: number, hooks: BudgetHooks = {}): InflightBudget {
  let held = 0;
  let burst = false;
  const fits = (bytes: number) => {
    const ok = held + bytes <= limit;
    if (!ok || (bytes > 0 && held + bytes >= limit / 2)) burst = true;
    return ok;
  };
  const giveBack = (bytes: number) => {
    held -= bytes;
    hooks.released?.(bytes);
    if (held === 0 && burst) {
      burst = false;
      hooks.afterBurst?.();
    }
  };
  return {
    limit,
    held: () => held,
    reserve(initial) {
      if (!fits(initial)) return undefined;
      held += initial;
      let bytes = initial;
      let released = false;
      return {
        get bytes() {
          return bytes;
        },
        grow(more) {
          if (released || !fits(more)) return false;
          held += more;
          bytes += more;
          return true;
        },
        release() {
          if (released) return;
          released = true;
          giveBack(bytes);
        },
      };
    },
  };
}
