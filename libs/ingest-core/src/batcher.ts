import type { Client } from "@connectrpc/connect";
import { type CatalogService, type Event } from "@whc/contracts";

export interface Appended {
  id: string;
  receivedAtMs: number;
}

interface Pending {
  event: Event;
  bytes: number;
  resolve: (a: Appended) => void;
  reject: (err: unknown) => void;
}

export interface BatcherOptions {
  /** Most events in one AppendEvents call. */
  maxEvents: number;
  /** Most body bytes in one call (a single larger event still goes alone). */
  maxBytes: number;
}

/**
 * Group commit: while one AppendEvents call is in flight, new captures queue up; when it
 * returns, everything queued goes in the next call and one store transaction. Under load
 * batches grow by themselves; when idle, a capture is sent at once. Each sender's promise
 * settles only when its batch is durable, or fails with the batch.
 */
export function createAppendBatcher(catalog: Client<typeof CatalogService>, options: BatcherOptions) {
  const queue: Pending[] = [];
  let inFlight = false;

  function takeBatch(): Pending[] {
    const batch: Pending[] = [];
    let bytes = 0;
    while (queue.length > 0 && batch.length < options.maxEvents) {
      const next = queue[0] as Pending;
      if (batch.length > 0 && bytes + next.bytes > options.maxBytes) break;
      batch.push(queue.shift() as Pending);
      bytes += next.bytes;
    }
    return batch;
  }

  async function pump(): Promise<void> {
    if (inFlight) return;
    inFlight = true;
    // Let every request whose body finished in this turn of the event loop join the batch.
    await new Promise<void>((resolve) => setImmediate(resolve));
    try {
      while (queue.length > 0) {
        const batch = takeBatch();
        try {
          const res = await catalog.appendEvents({ events: batch.map((p) => p.event) });
          batch.forEach((p, i) => {
            const a = res.events[i];
            if (a) p.resolve({ id: a.id, receivedAtMs: Number(a.receivedAtMs) });
            else p.reject(new Error("catalog answered fewer events than sent"));
          });
        } catch (err) {
          for (const p of batch) p.reject(err);
        }
      }
    } finally {
      inFlight = false;
    }
  }

  return {
    append(event: Event): Promise<Appended> {
      return new Promise<Appended>((resolve, reject) => {
        queue.push({ event, bytes: event.body?.ciphertext.length ?? 0, resolve, reject });
        void pump();
      });
    },
    pending: () => queue.length,
  };
}

export type AppendBatcher = ReturnType<typeof createAppendBatcher>;
