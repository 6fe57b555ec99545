export interface EgressLease {
  readonly key: string;
  release(): Promise<void>;
}

/**
 * Outbound capacity: at most `slotsPerOrigin` replays in flight to one origin across every
 * replay process. `acquire` answers undefined when no slot is free or the lease store cannot
 * be reached: replay fails closed, never sends without a lease.
 */
export interface EgressLeases {
  readonly kind: string;
  acquire(origin: string): Promise<EgressLease | undefined>;
  connected(): boolean;
  close(): Promise<void>;
}
