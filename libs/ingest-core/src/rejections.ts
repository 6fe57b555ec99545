import type { Client } from "@connectrpc/connect";
import type { CatalogService } from "@whc/contracts";
import type { Logger } from "@whc/logging";

/** How often counted rejections go to the catalog. */
export const REJECTIONS_FLUSH_MS = 1000;
/** Endpoints counted at once; past it, new ones wait for the next flush (a flood at many URLs cannot grow it). */
const MAX_PENDING_ENDPOINTS = 10_000;

export interface RejectionCounter {
  /** One request refused by the endpoint's inbound protection. */
  count(endpointId: string): void;
  /** Sends what is counted now (also on close). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The endpoints' `rejectedCount` (design §16), counted here and added to the catalog once a
 * second in one CountRejections call: a flood of refused requests costs the catalog one call
 * a second, not one per request. What a failed call carried is counted again for the next.
 */
export function createRejectionCounter(
  catalog: Pick<Client<typeof CatalogService>, "countRejections">,
  logger: Logger,
  flushMs = REJECTIONS_FLUSH_MS,
): RejectionCounter {
  let pending = new Map<string, number>();
  let timer: NodeJS.Timeout | undefined;
  const flush = async () => {
    timer = undefined;
    if (pending.size === 0) return;
    const sent = pending;
    pending = new Map();
    try {
      await catalog.countRejections({ rejections: [...sent].map(([endpointId, count]) => ({ endpointId, count: BigInt(count) })) });
    } catch (err) {
      logger.warn({ err }, "rejected requests not counted yet; retrying");
      for (const [id, n] of sent) if (pending.has(id) || pending.size < MAX_PENDING_ENDPOINTS) pending.set(id, (pending.get(id) ?? 0) + n);
      schedule();
    }
  };
  const schedule = () => {
    if (timer) return;
    timer = setTimeout(() => void flush(), flushMs);
    timer.unref();
  };
  return {
    count(endpointId) {
      const n = pending.get(endpointId);
      if (n === undefined && pending.size >= MAX_PENDING_ENDPOINTS) return;
      pending.set(endpointId, (n ?? 0) + 1);
      schedule();
    },
    flush,
    async close() {
      clearTimeout(timer);
      await flush();
    },
  };
}
