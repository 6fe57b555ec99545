import { Worker } from "node:worker_threads";
import { performance } from "node:perf_hooks";
import type { EngineJob, EngineOutcome } from "./engine.js";
import {
  BACKSTOP_CHECK_MS,
  backstopCpuMs,
  budgetOf,
  DEFAULT_CPU_MS,
  DEFAULT_MEMORY_BYTES,
  DEFAULT_THREADS,
  MAX_SOURCE_BYTES,
  THREAD_HEAP_MB,
  THREAD_STACK_MB,
  WATCHDOG_GRACE_MS,
} from "./limits.js";
import type { TransformRequest } from "./request.js";
import { openThreadClock, type ThreadClock } from "./thread-clock.js";
import { quickJSModule, workerFile } from "./worker-file.js";

/** What one run may use (design §17): 50 ms of CPU and 16 MiB by default. */
export interface SandboxLimits {
  cpuMs?: number;
  memoryBytes?: number;
}

export interface SandboxOptions extends SandboxLimits {
  /** Threads that run transforms at once (default 2), each started when first needed. */
  threads?: number;
}

export type TransformOutcome =
  | { ok: true; request: TransformRequest | null; durationMs: number }
  | { ok: false; error: string; durationMs: number };

interface Pending {
  job: EngineJob;
  resolve: (outcome: TransformOutcome) => void;
  reject: (err: Error) => void;
}

interface WorkerMessage {
  outcome?: EngineOutcome;
  idle?: true;
  threadId?: number;
  cpuMs?: number;
}

/** One sandbox thread, and the run it is doing. */
interface Lane {
  /** Undefined until the thread's script is found. */
  worker?: Worker;
  /** Ready for a run: started, and done with the last one. */
  idle: boolean;
  /** Has said it started once. */
  started: boolean;
  /** The thread's CPU clock, read from this thread (Linux), and where it stood when it went idle. */
  clock?: ThreadClock;
  idleCpuMs?: number | undefined;
  current?: { pending: Pending; startedAt: number; timers: NodeJS.Timeout[] } | undefined;
  /** Why the thread was stopped, or how it failed; the run it was doing reads this. */
  stopReason?: string | undefined;
}

function positive(name: string, value: number | undefined, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0 || value > max) throw new RangeError(`${name} must be a number in (0, ${max}]`);
  return value;
}

const round = (ms: number) => Math.round(ms * 100) / 100;

/** Whether a sandbox thread of this process has started: it warmed the QuickJS code all threads share. */
let warmedProcess = false;

/**
 * Runs user transforms in QuickJS (WebAssembly) on worker threads, so a transform that spends
 * its 50 ms never holds the event loop that called it (ADR 0075). Every run starts in a fresh
 * QuickJS runtime and context; the request goes in and comes back as JSON text.
 *
 * `run` resolves with the outcome of the user's code, failures included (`{ok:false, error}`:
 * a throw, a timeout, memory exhaustion, a syntax error, a missing `transform`, a bad return).
 * It rejects only when the sandbox cannot run anything: after `close()`, or when its thread
 * cannot start, so a delivery is not failed for something its transform did not do. Runs beyond
 * the thread count wait their turn, in order.
 */
export class TransformSandbox {
  private readonly cpuMs: number;
  private readonly memoryBytes: number;
  private readonly threads: number;
  private readonly queue: Pending[] = [];
  private readonly lanes = new Set<Lane>();
  private closed = false;

  constructor(limits: SandboxOptions = {}) {
    this.cpuMs = positive("cpuMs", limits.cpuMs, DEFAULT_CPU_MS, 60_000);
    this.memoryBytes = positive("memoryBytes", limits.memoryBytes, DEFAULT_MEMORY_BYTES, 1024 * 1024 * 1024);
    this.threads = Math.floor(positive("threads", limits.threads, DEFAULT_THREADS, 64));
  }

  /** Runs `transform(req)` from `source`; `now` (default: the current time) is the only clock it sees. */
  run(source: string, req: TransformRequest, options: { now?: number } = {}): Promise<TransformOutcome> {
    if (this.closed) return Promise.reject(new Error("the transform sandbox is closed"));
    if (Buffer.byteLength(source, "utf8") > MAX_SOURCE_BYTES) {
      return Promise.resolve({ ok: false, error: `the transform is larger than ${MAX_SOURCE_BYTES} bytes`, durationMs: 0 });
    }
    const job: EngineJob = {
      source,
      input: JSON.stringify(req),
      now: options.now ?? Date.now(),
      cpuMs: this.cpuMs,
      memoryBytes: this.memoryBytes,
    };
    return new Promise<TransformOutcome>((resolve, reject) => {
      this.queue.push({ job, resolve, reject });
      this.pump();
    });
  }

  /** Stops the threads; runs not finished reject. */
  async close(): Promise<void> {
    this.closed = true;
    const error = new Error("the transform sandbox is closed");
    for (const pending of this.queue.splice(0)) pending.reject(error);
    const lanes = [...this.lanes];
    this.lanes.clear();
    await Promise.all(
      lanes.map((lane) => {
        const pending = this.finishRun(lane);
        pending?.reject(error);
        lane.clock?.close();
        // Referenced again: an idle thread is not, and its exit would not be waited for.
        lane.worker?.ref();
        return lane.worker?.terminate();
      }),
    );
  }

  /** Hands waiting runs to idle threads, and starts threads (up to the limit) for the rest. */
  private pump(): void {
    for (const lane of this.lanes) {
      if (!this.queue.length) return;
      if (lane.idle) this.assign(lane, this.queue.shift()!);
    }
    const starting = [...this.lanes].filter((l) => !l.started).length;
    for (let n = this.queue.length - starting; n > 0 && this.lanes.size < this.threads; n -= 1) this.startLane();
  }

  private assign(lane: Lane, pending: Pending): void {
    const { cpuMs, wallStopMs } = budgetOf(pending.job, pending.job.input.length);
    lane.idle = false;
    const timers = [setTimeout(() => this.stop(lane, `the transform did not stop within ${wallStopMs} ms; its thread was stopped`), wallStopMs + WATCHDOG_GRACE_MS)];
    lane.current = { pending, startedAt: performance.now(), timers };
    const baseline = lane.idleCpuMs;
    if (lane.clock && baseline !== undefined) timers.push(setTimeout(() => this.watchCpu(lane, baseline, cpuMs), cpuMs));
    lane.worker!.ref();
    lane.worker!.postMessage({ job: pending.job });
  }

  /**
   * The backstop for a run that does not reach QuickJS's budget checks (a long native call, such
   * as a string built near the memory limit): the thread is stopped once its CPU time is well
   * past the run's budget. Read from this thread, while the run lasts longer than its budget.
   */
  private watchCpu(lane: Lane, baseline: number, cpuMs: number): void {
    const current = lane.current;
    if (!current) return;
    const used = (lane.clock!.cpuMs() ?? baseline) - baseline;
    if (used > backstopCpuMs(cpuMs)) return this.stop(lane, `the transform used more than ${cpuMs} ms of CPU and its thread was stopped`);
    current.timers.push(setTimeout(() => this.watchCpu(lane, baseline, cpuMs), BACKSTOP_CHECK_MS));
  }

  private stop(lane: Lane, reason: string): void {
    lane.stopReason ??= reason;
    void lane.worker?.terminate();
  }

  private startLane(): void {
    const lane: Lane = { idle: false, started: false };
    this.lanes.add(lane);
    Promise.all([workerFile(), quickJSModule()]).then(
      ([file, wasmModule]) => {
        if (this.closed) return;
        // No environment and none of this process's Node flags (a loader, --input-type...): the
        // thread's script is plain JavaScript and needs neither.
        const worker = new Worker(file, {
          env: {},
          execArgv: [],
          workerData: { wasmModule, warmUpRuns: wasmModule && warmedProcess ? 1 : 3 },
          resourceLimits: { stackSizeMb: THREAD_STACK_MB, maxOldGenerationSizeMb: THREAD_HEAP_MB },
        });
        lane.worker = worker;
        worker.on("message", (message: WorkerMessage) => this.onMessage(lane, message));
        worker.on("error", (err) => {
          lane.stopReason ??= threadFailure(err);
        });
        worker.on("exit", () => this.onExit(lane));
      },
      (err: unknown) => this.onExit(lane, err),
    );
  }

  private onMessage(lane: Lane, message: WorkerMessage): void {
    // After close, a thread's last messages change nothing (nor un-reference a thread being stopped).
    if (this.closed) return;
    if (message.outcome) this.finishRun(lane)?.resolve(message.outcome);
    if (message.idle) {
      if (!lane.started && message.threadId !== undefined) lane.clock = openThreadClock(message.threadId);
      lane.started = true;
      warmedProcess = true;
      lane.idle = true;
      lane.idleCpuMs = message.cpuMs;
    }
    this.pump();
    // An idle thread does not keep the process alive; one with a run to do does.
    if (lane.idle) lane.worker?.unref();
  }

  /** Ends the lane's current run; its caller, to answer. */
  private finishRun(lane: Lane): Pending | undefined {
    const current = lane.current;
    if (!current) return undefined;
    for (const timer of current.timers) clearTimeout(timer);
    lane.current = undefined;
    return current.pending;
  }

  private onExit(lane: Lane, startError?: unknown): void {
    if (!this.lanes.delete(lane) || this.closed) return;
    lane.clock?.close();
    const startedAt = lane.current?.startedAt ?? performance.now();
    const pending = this.finishRun(lane);
    if (pending) {
      const error = lane.stopReason ?? "the sandbox thread stopped during the run";
      pending.resolve({ ok: false, error, durationMs: round(performance.now() - startedAt) });
    } else if (!lane.started && ![...this.lanes].some((l) => l.started)) {
      // No thread could start: the runs waiting cannot be run by anyone.
      const why = startError instanceof Error ? startError.message : (lane.stopReason ?? "it exited");
      const error = new Error(`the transform sandbox's thread could not start: ${why}`);
      for (const waiting of this.queue.splice(0)) waiting.reject(error);
      return;
    }
    this.pump();
  }
}

/** How a thread's own failure reads in the attempt of the run it was doing. */
function threadFailure(err: Error): string {
  if ((err as { code?: string }).code === "ERR_WORKER_OUT_OF_MEMORY") {
    return "the transform's request or result was too large for the sandbox thread's memory; it was restarted";
  }
  return `the sandbox thread failed (${err.message}); it was restarted`;
}
