import { once } from "node:events";
import type { Writable } from "node:stream";
import { finished } from "node:stream/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { ApiError, type Cursor } from "@whc/api-model";

/**
 * Splits what arrives into whole lines, counting them and keeping the last: a partial line of an
 * export cut short is never written, so the output stays one JSON object per line and a resumed
 * export appends to it.
 */
function wholeLines() {
  let count = 0;
  let last: Buffer | undefined;
  let partial: Buffer[] = [];
  return {
    /** The whole lines `chunk` completes (with the partial line before it), or undefined. */
    push(chunk: Buffer): Buffer | undefined {
      const end = chunk.lastIndexOf(10);
      if (end < 0) {
        partial.push(chunk);
        return undefined;
      }
      const head = chunk.subarray(0, end + 1);
      let from = 0;
      for (let nl = head.indexOf(10); nl >= 0; nl = head.indexOf(10, nl + 1)) {
        last = from === 0 && partial.length ? Buffer.concat([...partial, head.subarray(0, nl)]) : head.subarray(from, nl);
        from = nl + 1;
        count += 1;
      }
      const out = partial.length ? Buffer.concat([...partial, head]) : head;
      partial = end + 1 < chunk.length ? [chunk.subarray(end + 1)] : [];
      return out;
    },
    /** Whether a line was begun and not ended; drops it (the next answer starts after the last whole one). */
    dropPartial(): boolean {
      const had = partial.length > 0;
      partial = [];
      return had;
    },
    count: () => count,
    /** receivedAt and id of the last whole line: where a resumed export starts. */
    last(): Cursor | undefined {
      if (!last) return undefined;
      const { receivedAt, id } = JSON.parse(last.toString("utf8")) as { receivedAt: string; id: string };
      return { at: receivedAt, id };
    },
  };
}

/** The answer broke off, stalled or ended inside a line: resumable. */
class CutShort extends Error {}

/** Writing the output failed (a closed pipe, a full disk): not resumable. */
class OutputFailed extends Error {
  constructor(readonly reason: Error) {
    super(reason.message);
  }
}

/** `chunk` to `out`, waiting while its buffer is full; what `out` failed with, as OutputFailed. */
async function write(out: Writable, chunk: Buffer, failure: () => Error | undefined): Promise<void> {
  const before = failure();
  if (before) throw new OutputFailed(before);
  if (!out.write(chunk)) {
    try {
      await once(out, "drain");
    } catch (err) {
      throw new OutputFailed(err as Error);
    }
  }
}

/**
 * Copies one answer's whole lines to `out`. Throws CutShort when the body breaks off, ends inside
 * a line, or brings no byte for `stallMs` while one is awaited (time spent waiting on `out`, a
 * pager the user has not scrolled, say, is not a stall).
 */
async function copyAnswer(
  body: ReadableStream<Uint8Array>,
  abort: AbortController,
  out: Writable,
  lines: ReturnType<typeof wholeLines>,
  stallMs: number,
  failure: () => Error | undefined,
): Promise<void> {
  // What a broken answer left of a line: this one starts after the last whole line.
  lines.dropPartial();
  const reader = body.getReader();
  let reading = false;
  let stalled = false;
  const timer = setTimeout(function check() {
    if (!reading) return void timer.refresh();
    stalled = true;
    abort.abort();
  }, stallMs);
  try {
    for (;;) {
      let next: Awaited<ReturnType<typeof reader.read>>;
      reading = true;
      timer.refresh();
      try {
        next = await reader.read();
      } catch (err) {
        throw new CutShort(stalled ? `no data for ${stallMs / 1000} s` : (err as Error).message);
      } finally {
        reading = false;
      }
      if (next.done) break;
      const whole = lines.push(Buffer.from(next.value.buffer, next.value.byteOffset, next.value.byteLength));
      if (whole) await write(out, whole, failure);
    }
  } finally {
    clearTimeout(timer);
    // Done with the answer: a clean end is unaffected, a failed write lets go of the connection.
    abort.abort();
  }
  if (lines.dropPartial()) throw new CutShort("the export ended inside a line");
}

export interface ExportOutcome {
  /** Lines (events) written, over every answer. */
  count: number;
  /** receivedAt and id of the last event written: where a resumed export starts. */
  last?: Cursor;
  /** Why the export stopped early; absent when it ended cleanly. */
  error?: Error;
}

export interface ExportOptions {
  /** Closes `out` at the end (a file), or leaves it open (stdout). */
  end: boolean;
  /** No byte for this long while one is awaited counts as the answer breaking off. */
  stallMs: number;
  /** Answers in a row that may break off without bringing a new line before the export gives up. */
  retries: number;
  backoff: { initialMs: number; maxMs: number };
  /** Told before each pause: the export so far, why the answer broke off, the pause. */
  onResume(progress: { count: number }, reason: string, delayMs: number): void;
}

/**
 * The export's answers, written to `out` as they stream, with backpressure, whole lines only:
 * `first`, then, when an answer breaks off, stalls or cannot be had for a transient reason
 * (unreachable, 502-504), `open(after)` after the last whole line written (undefined: none yet,
 * from where the command started), after a pause doubling up to `backoff.maxMs`; up to `retries`
 * times in a row without a new line, after which the outcome carries the error and the cursor to
 * resume with. `first` comes with its AbortController, which a stall aborts.
 */
export async function writeExport(
  first: { body: ReadableStream<Uint8Array>; abort: AbortController },
  open: (after: Cursor | undefined, signal: AbortSignal) => Promise<ReadableStream<Uint8Array>>,
  out: Writable,
  options: ExportOptions,
): Promise<ExportOutcome> {
  const lines = wholeLines();
  let outFailure: Error | undefined;
  // Kept to the end: an output that fails between two writes is not an uncaught error.
  out.on("error", (err: Error) => {
    outFailure ??= err;
  });
  const failure = () => outFailure;
  let error: Error | undefined;
  let delay = options.backoff.initialMs;
  let fruitless = 0;
  for (let answer: typeof first | undefined = first; ; answer = undefined) {
    const before = lines.count();
    try {
      if (!answer) {
        const abort = new AbortController();
        const body = await open(lines.last(), abort.signal).catch((err: unknown) => {
          throw ApiError.is(err) && err.transient ? new CutShort(err.message) : err;
        });
        answer = { body, abort };
      }
      await copyAnswer(answer.body, answer.abort, out, lines, options.stallMs, failure);
      break;
    } catch (err) {
      if (err instanceof OutputFailed) {
        error = err.reason;
        break;
      }
      if (!(err instanceof CutShort)) throw err;
      if (lines.count() > before) {
        fruitless = 0;
        delay = options.backoff.initialMs;
      }
      fruitless += 1;
      if (fruitless > options.retries) {
        error = err;
        break;
      }
      options.onResume({ count: lines.count() }, err.message, delay);
      await sleep(delay);
      delay = Math.min(delay * 2, options.backoff.maxMs);
    }
  }
  if (options.end) {
    if (error) out.destroy();
    else {
      out.end();
      await finished(out).catch((err: Error) => {
        error = err;
      });
    }
  }
  error ??= outFailure;
  const last = lines.last();
  return { count: lines.count(), ...(last ? { last } : {}), ...(error ? { error } : {}) };
}
