/** The limits of design §17 and the ones this sandbox adds (ADR 0075). */

const KiB = 1024;
const MiB = 1024 * KiB;

/** A transform's source, in UTF-8 bytes. */
export const MAX_SOURCE_BYTES = 64 * KiB;

/** CPU one run may use for the transform's own work, by default. */
export const DEFAULT_CPU_MS = 50;

/** Memory one run may use for the transform's own work, by default. */
export const DEFAULT_MEMORY_BYTES = 16 * MiB;

/**
 * QuickJS (in WebAssembly) reads and writes JSON at about 30 MB/s, so the request handed in and
 * the result handed back are not charged to the transform: a run may use this much more CPU per
 * MiB of the request's JSON. About twice what a transform adding a header cost on 1-4 MiB
 * requests here (100-125 ms of CPU per MiB, tools/bench/transform).
 */
export const MARSHAL_MS_PER_MIB = 200;

/**
 * And this much more memory per byte of the request's JSON: a request of tiny JSON objects
 * needed 3.3 times its size to be parsed and written back, a typical event 1.5 times.
 */
export const MARSHAL_MEMORY_PER_BYTE = 4;

/** The body of the request a transform returns, in bytes (WHC_MAX_INBOUND_BODY_BYTES' default). */
export const MAX_RESULT_BODY_BYTES = 10 * MiB;

/** The JSON text of the request a transform returns (a base64 body of 10 MiB is 13.4 MiB). */
export const MAX_RESULT_JSON_BYTES = 16 * MiB;

/** The header fields of the request a transform returns: names, values, ": " and CRLF, in bytes. */
export const MAX_RESULT_HEADER_BYTES = 64 * KiB;

/** A request path or query string a transform returns, in characters. */
export const MAX_RESULT_TARGET_CHARS = 16 * KiB;

/** QuickJS's own stack: about 1,500 nested calls; deep enough for any transform, and far within the thread's. */
export const SANDBOX_STACK_BYTES = 256 * KiB;

/** The thread's own stack (Node's default for a worker is 4 MiB; QuickJS needs about twice its limit). */
export const THREAD_STACK_MB = 4;

/** The thread's V8 heap: the request and result as JS strings and objects, besides QuickJS's memory. */
export const THREAD_HEAP_MB = 256;

/**
 * A run stops when its wall time passes this many times its CPU budget (at least
 * MIN_WALL_STOP_MS), whatever CPU it used: a thread starved that long is as good as stuck.
 */
export const WALL_STOP_FACTOR = 10;
export const MIN_WALL_STOP_MS = 1000;

/** The host stops the thread itself when a run has not answered this long after its wall stop. */
export const WATCHDOG_GRACE_MS = 2000;

/**
 * QuickJS checks a run's budget between bytecode instructions; a long native call (a string
 * built near the memory limit took seconds) does not check it. The host reads the thread's CPU
 * time every BACKSTOP_CHECK_MS once a run is past its budget, and stops the thread past this.
 */
export const BACKSTOP_CHECK_MS = 25;
export const backstopCpuMs = (cpuMs: number) => 2 * cpuMs + 50;

/**
 * A thread's WebAssembly memory only grows; past this size (beyond the largest run's limit) the
 * thread starts a fresh QuickJS instance after the run.
 */
export const RECYCLE_WASM_BYTES = 64 * MiB;

/** Threads that run transforms at once, by default. */
export const DEFAULT_THREADS = 2;

/** The budget of a run whose request's JSON is `inputChars` long. */
export function budgetOf(limits: { cpuMs: number; memoryBytes: number }, inputChars: number) {
  const cpuMs = limits.cpuMs + Math.round((inputChars / MiB) * MARSHAL_MS_PER_MIB);
  return {
    cpuMs,
    memoryBytes: limits.memoryBytes + inputChars * MARSHAL_MEMORY_PER_BYTE,
    wallStopMs: Math.max(MIN_WALL_STOP_MS, cpuMs * WALL_STOP_FACTOR),
  };
}
