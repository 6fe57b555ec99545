import { Readable, Transform, type Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import type { Cursor } from "@whc/api-model";

/**
 * Passes whole lines only, counting them and keeping the last: a partial line of an export cut
 * short is never written, so the output stays one JSON object per line and can be resumed by
 * appending.
 */
function wholeLines() {
  let count = 0;
  let last: Buffer | undefined;
  let partial: Buffer[] = [];
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const end = chunk.lastIndexOf(10);
      if (end < 0) {
        partial.push(chunk);
        return done();
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
      done(null, out);
    },
    flush(done) {
      // A clean end always closes its last line; anything left is not a whole line.
      done(partial.length ? new Error("the export ended inside a line") : null);
    },
  });
  return { stream, count: () => count, last: () => last };
}

export interface ExportOutcome {
  /** Lines (events) written. */
  count: number;
  /** receivedAt and id of the last event written: where a resumed export starts. */
  last?: Cursor;
  /** Why the export stopped early; absent when it ended cleanly. */
  error?: Error;
}

/** Writes the export's body to `out` as it streams, with backpressure, whole lines only. */
export async function writeExport(body: ReadableStream<Uint8Array>, out: Writable, options: { end: boolean }): Promise<ExportOutcome> {
  const lines = wholeLines();
  let error: Error | undefined;
  try {
    await pipeline(Readable.fromWeb(body as WebReadableStream<Uint8Array>), lines.stream, out, { end: options.end });
  } catch (err) {
    error = err as Error;
  }
  const lastLine = lines.last();
  let last: Cursor | undefined;
  if (lastLine) {
    const { receivedAt, id } = JSON.parse(lastLine.toString("utf8")) as { receivedAt: string; id: string };
    last = { at: receivedAt, id };
  }
  return { count: lines.count(), ...(last ? { last } : {}), ...(error ? { error } : {}) };
}
