/**
 * A sandbox thread: one QuickJS instance (WebAssembly), running one transform at a time for the
 * TransformSandbox that started it. In: `{job}`, one at a time. Out: `{idle, threadId, cpuMs}`
 * once started; per job `{outcome}` as soon as it is known, then `{idle, cpuMs}` when the thread
 * can take the next (after replacing its QuickJS instance when that was due). `threadId` lets
 * the host watch this thread's CPU time, and `cpuMs` is where it stood.
 */
import { parentPort, workerData } from "node:worker_threads";
import { newQuickJSWASMModule, newVariant, RELEASE_SYNC } from "quickjs-emscripten";
import { Engine, type EngineJob, type FixedClock } from "./engine.js";
import { DEFAULT_MEMORY_BYTES, RECYCLE_WASM_BYTES } from "./limits.js";
import { currentThreadId, openThreadClock } from "./thread-clock.js";

const port = parentPort;
if (!port) throw new Error("sandbox-worker runs as a worker thread");

/**
 * QuickJS asks the time of this thread's Date.now (Emscripten's clock import calls it). While a
 * run runs it answers the run's `now`: Date.now(), new Date() and Date() inside a transform all
 * read it, and there is no other clock in there. Nothing else on this thread reads Date.now.
 */
function fixDateNow(): FixedClock {
  const realNow = Date.now.bind(Date);
  let fixed: number | undefined;
  Date.now = () => fixed ?? realNow();
  return {
    set: (now) => {
      fixed = now;
    },
    clear: () => {
      fixed = undefined;
    },
  };
}

/**
 * What a first run on a fresh thread would otherwise pay: V8 compiles WebAssembly and JavaScript
 * functions the first time they run (a first transform cost 26-30 ms of CPU against 1-4 ms after),
 * which must not count against a user's 50 ms. A few runs through what transforms do: JSON,
 * strings, regular expressions, arrays, objects, Date, promises, a thrown error. The host asks
 * for fewer once a thread of the process has warmed the QuickJS code all threads share.
 */
const WARM_UP_SOURCE = `async function transform(req) {
  const copy = JSON.parse(JSON.stringify(req));
  copy.headers["x-warm"] = [String(new Date().toISOString()), "a,b".split(",").join(";")];
  copy.body.items = copy.body.items.map((i) => ({ ...i, name: i.name.toUpperCase().replace(/[aeiou]/g, "_") }));
  copy.body.sum = copy.body.items.reduce((s, i) => s + i.n * Math.random(), 0);
  try { null.x; } catch (e) { copy.body.error = String(e); }
  await Promise.resolve();
  return Object.assign({}, copy);
}`;

function warmUp(engine: Engine, runs: number): void {
  const items = Array.from({ length: 200 }, (_, n) => ({ n, name: `item number ${n}`, tags: ["a", "b"], nested: { ok: true, v: null } }));
  const input = JSON.stringify({ method: "POST", path: "/", query: "", headers: { "content-type": ["application/json"] }, body: { items } });
  for (let i = 0; i < runs; i += 1) {
    engine.run({ source: WARM_UP_SOURCE, input, now: 0, cpuMs: 5000, memoryBytes: DEFAULT_MEMORY_BYTES, seed: 1 });
  }
}

const clock = openThreadClock();
const fixedClock = fixDateNow();

/** QuickJS compiled once by the host (worker-file.ts), or undefined: this thread compiles its own. */
const { wasmModule, warmUpRuns = 3 } = (workerData ?? {}) as { wasmModule?: WebAssembly.Module; warmUpRuns?: number };
const variant = wasmModule ? newVariant(RELEASE_SYNC, { wasmModule }) : RELEASE_SYNC;

async function newEngine(): Promise<Engine> {
  // An instance of its own: a fresh WebAssembly memory, not the process-wide shared one.
  const engine = new Engine(await newQuickJSWASMModule(variant), clock, fixedClock);
  warmUp(engine, warmUpRuns);
  return engine;
}

let engine = await newEngine();

port.on("message", ({ job }: { job: EngineJob }) => {
  port.postMessage({ outcome: engine.run(job) });
  // A broken instance is replaced; so is one whose memory grew past what runs need.
  const replace = engine.broken || engine.memoryBytes() > RECYCLE_WASM_BYTES;
  void (replace ? newEngine() : Promise.resolve(engine)).then((next) => {
    engine = next;
    port.postMessage({ idle: true, cpuMs: clock.cpuMs() });
  });
});
port.postMessage({ idle: true, threadId: currentThreadId(), cpuMs: clock.cpuMs() });
