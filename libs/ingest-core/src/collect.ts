import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

let collector: (() => void) | undefined;

/**
 * V8's full collection. Node only offers it under --expose-gc; the flag set at run time exposes
 * it to contexts made afterwards (Jest gets its collector the same way). Looked up once, when
 * first needed, never on import.
 */
function fullCollection(): () => void {
  if (collector) return collector;
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (!exposed) setFlagsFromString("--expose-gc");
  collector = exposed ?? (runInNewContext("gc") as () => void);
  return collector;
}

/**
 * Collects garbage once a burst of large bodies is over. A request body is a small object on
 * V8's heap owning megabytes of memory outside it; V8 schedules collections by what is
 * allocated, so when a flood ends and the process goes quiet, no collection comes, and the
 * dead bodies keep their memory for as long as the quiet lasts (measured: 88 MiB of them still
 * held 20 s after a flood of 400 x 9 MiB, gone at the first collection). The returned function
 * asks for a collection `quietMs` after its last call, and one more `quietMs` after that: what
 * the connections of the burst held natively is only freed by the collection after the one
 * that found them dead (measured: 90 MB of external memory left by the first, gone at the second).
 */
export function createBurstCollector(quietMs: number, collect: () => void = fullCollection()): () => void {
  let timer: NodeJS.Timeout | undefined;
  const later = (then: () => void) => {
    clearTimeout(timer);
    timer = setTimeout(then, quietMs);
    timer.unref();
  };
  return () =>
    later(() => {
      collect();
      later(collect);
    });
}

/** Bodies smaller than this die young and cheaply; only larger ones count towards a collection. */
export const LARGE_GARBAGE_BYTES = 64 * 1024;

/**
 * Collects garbage after every `every` bytes of large bodies have died. During a flood of large
 * bodies V8 lets dead ones pile up outside its heap until their sum passes its own limit for
 * external memory (64 MiB over what the last collection left), on top of the bodies still in
 * flight: measured, 139 MB of array buffers at the peak of 400 x 9 MiB against a 64 MiB
 * budget, 17 MB after one collection. Counting what dies and collecting at a quarter of the
 * budget keeps the dead ones to that quarter. The collection runs on the next turn of the
 * event loop, never inside the caller. Small bodies are not counted: ordinary traffic never
 * triggers it.
 */
export function createReleaseCollector(every: number, collect: () => void = fullCollection()): (bytes: number) => void {
  let dead = 0;
  let pending = false;
  return (bytes) => {
    if (bytes < LARGE_GARBAGE_BYTES) return;
    dead += bytes;
    if (dead < every || pending) return;
    pending = true;
    setImmediate(() => {
      // Whatever died until now, also since the step was reached, is collected here.
      dead = 0;
      pending = false;
      collect();
    });
  };
}
