import type { Client } from "@connectrpc/connect";
import { decodeAppendedEvents, encodeCapturedEvents, type AppendedEvent, type CapturedEvent, type CatalogService, type DecodedAppendedEvent } from "@whc/contracts";
import type { Context } from "@opentelemetry/api";
import { inBatchSpan, inContext, waitingContext } from "./tracing.js";

/** A stored event's stamp, or `endpointMissing`: its endpoint was gone at the commit and nothing was stored. */
export type Appended =
  | { id: string; receivedAtMs: number; sequenceIndex: number; responseCode: number; endpointMissing?: undefined; /** The first event with its dedupe key; "" for none. */ duplicateOf: string }
  | { endpointMissing: true };

type Done = (err: unknown, appended?: Appended) => void;

interface Pending {
  capture: CapturedEvent;
  bytes: number;
  done: Done;
  /** The capture's trace context (tracing on only). */
  trace: Context | undefined;
}

export interface BatcherOptions {
  /** Most events in one AppendEvents call. */
  maxEvents: number;
  /** Most body bytes in one call (a single larger event still goes alone). */
  maxBytes: number;
  /** Told the size of each call's batch (metrics). */
  onBatch?: (events: number) => void;
  /**
   * When a call returns with captures already waiting, how long the next call may wait for
   * the senders just answered to send their next ones: until as many have joined as that
   * call carried, or this long (default BATCH_LINGER_MS; 0 sends at once). A capture arriving while
   * nothing is in flight is always sent on the next turn of the event loop.
   */
  lingerMs?: number;
  /**
   * Send the batch as `encoded_captures`, written in one pass (ADR 0013), instead of as
   * `captures` messages, and ask for the answer as `encoded_events` (ADR 0094): for a catalog in
   * another process, where the call is encoded anyway. Off for one in this process, whose
   * in-memory transport hands the messages over as they are.
   */
  encodeCaptures?: boolean;
}

/**
 * The default linger. Under load the senders split into two groups that take turns, each
 * half of them: one in the call in flight, the other waiting. Waiting for the group just
 * answered to come back merges them, halving the calls: at 50 connections 48 captures per
 * call instead of 25; in the distributed services 16-26 % less CPU per capture, 24-40 % more
 * captures/s and a lower p99 (docs/performance.md, "Ingest's batches").
 */
export const BATCH_LINGER_MS = 2;

/**
 * Group commit: captures that arrive while a call is in flight queue up and go in the next
 * call, one store transaction. Under load batches grow by themselves, and the next call may
 * linger a little for more (lingerMs); when idle, a capture is sent after one event-loop
 * turn. Each sender is called back only when its batch is durable, or fails with the batch.
 * One call at a time: two in flight split the batches and measured 35 % fewer captures/s
 * (docs/performance.md).
 */
export function createAppendBatcher(catalog: Client<typeof CatalogService>, options: BatcherOptions) {
  const queue: Pending[] = [];
  const encoding = createEncodingMemory();
  const lingerMs = options.lingerMs ?? BATCH_LINGER_MS;
  let inFlight = false;
  let scheduled = false;
  /** Captures in the call last sent: as many are expected back once it is answered. */
  let lastBatch = 0;

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
    options.onBatch?.(batch.length);
    let answered: readonly (AppendedEvent | DecodedAppendedEvent)[];
    try {
      const res = await inBatchSpan(
        batch.map((p) => p.trace),
        () => {
          const captures = batch.map((p) => p.capture);
          return catalog.appendEvents(
            options.encodeCaptures ? { encodedCaptures: encodeCapturedEvents(captures, encoding.lend), encodeAnswer: true } : { captures },
          );
        },
      );
      // Asked for encoded (ADR 0094); a catalog built before reads no such request field and answers `events`.
      answered = res.encodedEvents.length > 0 ? decodeAppendedEvents(res.encodedEvents) : res.events;
    } catch (err) {
      // A failed call may still hold what it was lent (a deadline answers before the write ends).
      encoding.forget();
      for (const p of batch) p.done(err);
      return;
    }
    batch.forEach((p, i) => {
      const a = answered[i];
      if (!a) p.done(new Error("catalog answered fewer events than sent"));
      else if (a.endpointMissing) p.done(undefined, { endpointMissing: true });
      else p.done(undefined, { id: a.id, receivedAtMs: Number(a.receivedAtMs), sequenceIndex: Number(a.sequenceIndex), responseCode: a.responseCode, duplicateOf: a.duplicateOf });
    });
  }

  function flush(): void {
    scheduled = false;
    if (inFlight || queue.length === 0) return;
    inFlight = true;
    const batch = takeBatch();
    lastBatch = batch.length;
    void send(batch).finally(() => {
      inFlight = false;
      schedule(lingerMs);
    });
  }

  /** Sends once the senders of the call just answered are back (checked every 1 ms), or after `ms`. */
  function lingerThenFlush(ms: number): void {
    const until = performance.now() + ms;
    const expected = Math.min(queue.length + lastBatch, options.maxEvents);
    const step = () => {
      if (queue.length >= expected || performance.now() >= until) return flush();
      setTimeout(step, 1);
    };
    setTimeout(step, 1);
  }

  function schedule(linger = 0): void {
    if (scheduled || inFlight || queue.length === 0) return;
    scheduled = true;
    if (linger > 0) return lingerThenFlush(linger);
    // Let every request whose body finished in this turn of the event loop join the batch.
    setImmediate(flush);
  }

  function appendThen(capture: CapturedEvent, done: Done): void {
    const trace = waitingContext();
    queue.push({ capture, bytes: capture.body?.length ?? 0, done: inContext(trace, done), trace });
    schedule();
  }

  return {
    /** Calls back once the event's batch is durable (or failed). */
    appendThen,
    append(capture: CapturedEvent): Promise<Appended> {
      return new Promise<Appended>((resolve, reject) => appendThen(capture, (err, a) => (err ? reject(err) : resolve(a as Appended))));
    },
    pending: () => queue.length,
  };
}

export type AppendBatcher = ReturnType<typeof createAppendBatcher>;

/** Most memory the encoded batches are written into call after call (a larger batch gets its own). */
const ENCODING_MEMORY_BYTES = 1024 * 1024;

/**
 * Memory a call's encoded captures are written into, kept for the next call. A batch of 48
 * ordinary captures is about 200 KB, and glibc maps memory afresh for each allocation that
 * large (MALLOC_MMAP_THRESHOLD_=131072, docs/operations.md) and gives it back when freed: a
 * page fault per 4 KiB written, call after call. One call is in flight at a time, and an
 * answered call has been written out, so the next may write over it; after a failed call the
 * memory is left to it.
 */
function createEncodingMemory() {
  let kept: Buffer | undefined;
  return {
    lend(size: number): Buffer {
      if (size > ENCODING_MEMORY_BYTES) return Buffer.allocUnsafe(size);
      // Its own memory (never a slice of Node's shared pool), with room for batches to grow.
      if (!kept || kept.length < size) kept = Buffer.allocUnsafeSlow(Math.min(ENCODING_MEMORY_BYTES, Math.max(size * 2, 64 * 1024)));
      return kept.subarray(0, size);
    },
    forget(): void {
      kept = undefined;
    },
  };
}
