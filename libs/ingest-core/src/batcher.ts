import type { Client } from "@connectrpc/connect";
import { type CatalogService, type Event } from "@whc/contracts";

export interface Appended {
  id: string;
  receivedAtMs: number;
}

type Done = (err: unknown, appended?: Appended) => void;

interface Pending {
  event: Event;
  bytes: number;
  done: Done;
}

export interface BatcherOptions {
  /** Most events in one AppendEvents call. */
  maxEvents: number;
  /** Most body bytes in one call (a single larger event still goes alone). */
  maxBytes: number;
  /**
   * AppendEvents calls in flight at once. With two, the next batch is on its way while the
   * store commits the last one, so the event loop and the store work side by side instead
   * of in turns. The catalog commits appends one at a time, in the order they arrive.
   */
  maxInFlight: number;
}

/**
 * Group commit: captures that arrive while calls are in flight queue up and go in the next
 * call, one store transaction. Under load batches grow by themselves; when idle, a capture
 * is sent after one event-loop turn. Each sender's promise settles only when its batch is
 * durable, or fails with the batch.
 */
export function createAppendBatcher(catalog: Client<typeof CatalogService>, options: BatcherOptions) {
  const queue: Pending[] = [];
  let inFlight = 0;
  let scheduled = false;

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

  async function send(batch: Pending[]): Promise<void> {
    let res: Awaited<ReturnType<typeof catalog.appendEvents>>;
    try {
      res = await catalog.appendEvents({ events: batch.map((p) => p.event) });
    } catch (err) {
      for (const p of batch) p.done(err);
      return;
    }
    batch.forEach((p, i) => {
      const a = res.events[i];
      if (a) p.done(undefined, { id: a.id, receivedAtMs: Number(a.receivedAtMs) });
      else p.done(new Error("catalog answered fewer events than sent"));
    });
  }

  function flush(): void {
    scheduled = false;
    while (inFlight < options.maxInFlight && queue.length > 0) {
      inFlight += 1;
      void send(takeBatch()).finally(() => {
        inFlight -= 1;
        schedule();
      });
    }
  }

  function schedule(): void {
    if (scheduled || inFlight >= options.maxInFlight || queue.length === 0) return;
    scheduled = true;
    // Let every request whose body finished in this turn of the event loop join the batch.
    setImmediate(flush);
  }

  function appendThen(event: Event, done: Done): void {
    queue.push({ event, bytes: event.body?.ciphertext.length ?? 0, done });
    schedule();
  }

  return {
    /** Calls back once the event's batch is durable (or failed). */
    appendThen,
    append(event: Event): Promise<Appended> {
      return new Promise<Appended>((resolve, reject) => appendThen(event, (err, a) => (err ? reject(err) : resolve(a as Appended))));
    },
    pending: () => queue.length,
  };
}

export type AppendBatcher = ReturnType<typeof createAppendBatcher>;
