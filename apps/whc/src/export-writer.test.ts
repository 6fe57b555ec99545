import { describe, it, expect } from "vitest";
import { Writable } from "node:stream";
import { writeExport, type ExportOptions } from "./export-writer.js";

/**
 * The export writer's stall timer against streams in the process: only time spent waiting for the
 * answer's next bytes counts, never time spent waiting for the output (a pager not scrolled).
 * The resumes themselves run against the real gateway in cli-events.test.ts.
 */

const line = (n: number) => `${JSON.stringify({ id: `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`, receivedAt: "2026-01-01T00:00:00.000Z" })}\n`;

/** An answer of `lines` lines, all there at once, that breaks off when `abort` is told to. */
function answer(lines: number) {
  const abort = new AbortController();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      abort.signal.addEventListener("abort", () => controller.error(new Error("aborted")));
      for (let n = 0; n < lines; n++) controller.enqueue(Buffer.from(line(n)));
      controller.close();
    },
  });
  return { body, abort };
}

/** An output that takes `ms` to take each write, keeping at most one waiting. */
function slowOutput(ms: number) {
  const written: Buffer[] = [];
  const out = new Writable({
    highWaterMark: 1,
    write(chunk: Buffer, _encoding, done) {
      written.push(chunk);
      setTimeout(done, ms);
    },
  });
  return { out, text: () => Buffer.concat(written).toString("utf8") };
}

describe("writeExport", () => {
  it("does not take a slow output for a stalled answer", async () => {
    const { out, text } = slowOutput(40);
    const resumes: string[] = [];
    const options: ExportOptions = {
      end: true,
      stallMs: 10,
      retries: 5,
      backoff: { initialMs: 1, maxMs: 1 },
      onResume: (_progress, reason) => resumes.push(reason),
    };
    const outcome = await writeExport(answer(20), () => Promise.reject(new Error("asked again")), out, options);
    expect(resumes).toEqual([]);
    expect(outcome).toEqual({ count: 20, last: { at: "2026-01-01T00:00:00.000Z", id: "00000000-0000-4000-8000-000000000019" } });
    expect(text()).toBe(Array.from({ length: 20 }, (_, n) => line(n)).join(""));
  });
});
