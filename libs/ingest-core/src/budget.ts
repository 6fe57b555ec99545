/**
 * The admission budget (design §13, WHC_INGEST_MAX_INFLIGHT_BYTES): the request-body bytes
 * ingest holds across every request in flight. A request reserves its declared length before
 * its body is read, a chunked one grows its reservation as its chunks arrive, and whatever
 * it holds goes back exactly once, however the request ends.
 *
 * Within it, one remote address and one endpoint may each hold only a share (design §14,
 * WHC_INGEST_MAX_INFLIGHT_BYTES_PER_PEER and _PER_ENDPOINT), so a few slow senders, or one
 * tenant's flood, cannot take all of it from everyone else.
 */
export interface InflightBudget {
  /** The most bytes held at once. */
  readonly limit: number;
  /** Bytes held now. */
  held(): number;
  /**
   * Reserves `bytes` for a request of `holder` (its remote address and endpoint), or says
   * which limit it would pass. A reservation of 0 bytes always succeeds.
   */
  reserve(bytes: number, holder?: Holder): Reservation | OverloadReason;
}

/** Which limit a refused reservation would have passed: the whole budget, the peer's share or the endpoint's. */
export type OverloadReason = "inflight" | "peer" | "endpoint";
export const OVERLOAD_REASONS: readonly OverloadReason[] = ["inflight", "peer", "endpoint"];

/** Whose share a reservation counts against. */
export interface Holder {
  peer: string;
  endpoint: string;
}

/** One request's share of the budget. */
export interface Reservation {
  /** Bytes this request holds. */
  readonly bytes: number;
  /** Holds `more` bytes as well; or, holding nothing more, says which limit that would pass. */
  grow(more: number): OverloadReason | undefined;
  /** Gives back all it holds; later calls do nothing (every way a request ends may call it). */
  release(): void;
}

export interface BudgetHooks {
  /** Called when the budget is empty again after a burst: since the last call it was at least half used, or it refused a request. */
  afterBurst?: () => void;
  /** Called with the bytes each reservation gives back, as it gives them back. */
  released?: (bytes: number) => void;
}

/** The most one remote address and one endpoint may hold; unset: the whole budget. */
export interface BudgetShares {
  perPeer?: number;
  perEndpoint?: number;
}

/** Bytes held per key (peer or endpoint); a key holding nothing has no entry. */
class Tally {
  private readonly held = new Map<string, number>();
  constructor(readonly limit: number) {}
  fits(key: string, bytes: number): boolean {
    return (this.held.get(key) ?? 0) + bytes <= this.limit;
  }
  add(key: string, bytes: number): void {
    const now = (this.held.get(key) ?? 0) + bytes;
    if (now === 0) this.held.delete(key);
    else this.held.set(key, now);
  }
}

export function createInflightBudget(limit: number, hooks: BudgetHooks = {}, shares: BudgetShares = {}): InflightBudget {
  let held = 0;
  let burst = false;
  const peers = new Tally(shares.perPeer ?? limit);
  const endpoints = new Tally(shares.perEndpoint ?? limit);
  const refusal = (bytes: number, holder: Holder | undefined): OverloadReason | undefined => {
    if (bytes === 0) return undefined;
    if (held + bytes >= limit / 2) burst = true;
    // The narrowest limit is named first: it says who holds too much.
    if (holder && !peers.fits(holder.peer, bytes)) return "peer";
    if (holder && !endpoints.fits(holder.endpoint, bytes)) return "endpoint";
    return held + bytes > limit ? "inflight" : undefined;
  };
  const take = (bytes: number, holder: Holder | undefined) => {
    held += bytes;
    if (holder && bytes !== 0) {
      peers.add(holder.peer, bytes);
      endpoints.add(holder.endpoint, bytes);
    }
  };
  const giveBack = (bytes: number, holder: Holder | undefined) => {
    take(-bytes, holder);
    hooks.released?.(bytes);
    if (held === 0 && burst) {
      burst = false;
      hooks.afterBurst?.();
    }
  };
  return {
    limit,
    held: () => held,
    reserve(initial, holder) {
      const refused = refusal(initial, holder);
      if (refused) {
        burst = true;
        return refused;
      }
      take(initial, holder);
      let bytes = initial;
      let released = false;
      return {
        get bytes() {
          return bytes;
        },
        grow(more) {
          if (released) return "inflight";
          const refusedMore = refusal(more, holder);
          if (refusedMore) {
            burst = true;
            return refusedMore;
          }
          take(more, holder);
          bytes += more;
          return undefined;
        },
        release() {
          if (released) return;
          released = true;
          giveBack(bytes, holder);
        },
      };
    },
  };
}

/** Whether `reserve` answered a reservation (and not the reason for a refusal). */
export function isReservation(value: Reservation | OverloadReason): value is Reservation {
  return typeof value !== "string";
}
