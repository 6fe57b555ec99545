import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/**
 * V8's full collection. Node only offers it under --expose-gc; the flag set at run time exposes
 * it to contexts made afterwards (Jest gets its collector the same way). Looked up once, when
 * first needed, never on import.
 */
function fullCollection(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
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
