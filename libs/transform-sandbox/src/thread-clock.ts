import { closeSync, openSync, readlinkSync, readSync } from "node:fs";
import { performance } from "node:perf_hooks";

/**
 * The CPU time a thread has used, in ms, from Linux's per-thread scheduler statistics
 * (`schedstat`, first field: nanoseconds on a CPU). Opened once, then read in place (about 20 µs
 * a reading here). Undefined where there is no such file: budgets are then counted in wall time.
 */
export interface ThreadClock {
  cpuMs(): number | undefined;
  close(): void;
}

/** This thread's id in /proc (Linux), to hand to the thread that watches it. */
export function currentThreadId(): number | undefined {
  try {
    const id = Number(readlinkSync("/proc/thread-self").split("/").at(-1));
    return Number.isInteger(id) ? id : undefined;
  } catch {
    return undefined;
  }
}

/** The clock of the calling thread, or of thread `threadId` of this process. */
export function openThreadClock(threadId?: number): ThreadClock {
  let fd: number | undefined;
  try {
    fd = openSync(threadId === undefined ? "/proc/thread-self/schedstat" : `/proc/self/task/${threadId}/schedstat`, "r");
  } catch {
    fd = undefined;
  }
  const buf = Buffer.alloc(96);
  const read = (): number | undefined => {
    if (fd === undefined) return undefined;
    try {
      const n = readSync(fd, buf, 0, buf.length, 0);
      const ns = Number(buf.toString("latin1", 0, n).split(" ", 1)[0]);
      return Number.isFinite(ns) ? ns / 1e6 : undefined;
    } catch {
      return undefined;
    }
  };
  if (read() === undefined && fd !== undefined) {
    closeSync(fd);
    fd = undefined;
  }
  return {
    cpuMs: read,
    close: () => {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}

/**
 * One run's budget. Wall time is read on every check (cheap); CPU time only once the wall time
 * has passed the budget, at most once a millisecond: until then CPU time cannot have passed it
 * either. A run also stops when its wall time passes `wallStopMs`, whatever its CPU.
 */
export class RunBudget {
  private readonly wallStart = performance.now();
  private readonly cpuStart: number | undefined;
  private nextCpuCheck = 0;
  /** Why the budget stopped the run, once it did. */
  stopped: "cpu" | "wall" | undefined;

  constructor(
    private readonly clock: ThreadClock,
    readonly cpuMs: number,
    readonly wallStopMs: number,
  ) {
    this.cpuStart = clock.cpuMs();
  }

  elapsedMs(): number {
    return performance.now() - this.wallStart;
  }

  /** True once the run must stop; stays true. */
  exceeded(): boolean {
    if (this.stopped) return true;
    const wall = this.elapsedMs();
    if (wall <= this.cpuMs) return false;
    if (wall > this.wallStopMs) return this.stop("wall");
    if (this.cpuStart === undefined) return this.stop("cpu");
    if (wall < this.nextCpuCheck) return false;
    this.nextCpuCheck = wall + 1;
    const used = (this.clock.cpuMs() ?? Infinity) - this.cpuStart;
    return used > this.cpuMs ? this.stop("cpu") : false;
  }

  private stop(why: "cpu" | "wall"): true {
    this.stopped = why;
    return true;
  }
}
