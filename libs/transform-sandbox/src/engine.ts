import { Scope, type QuickJSContext, type QuickJSHandle, type QuickJSRuntime, type QuickJSWASMModule } from "quickjs-emscripten";
import { DRIVER_SOURCE } from "./driver.js";
import { budgetOf, MAX_RESULT_JSON_BYTES, SANDBOX_STACK_BYTES } from "./limits.js";
import { checkResult, InvalidResultError } from "./result.js";
import type { TransformRequest } from "./request.js";
import { RunBudget, type ThreadClock } from "./thread-clock.js";

/** One run as the host thread hands it to a sandbox thread: data only, the request as JSON text. */
export interface EngineJob {
  source: string;
  input: string;
  now: number;
  cpuMs: number;
  memoryBytes: number;
  /** Four 32-bit seeds for Math.random; fresh random ones when absent. */
  seeds?: [number, number, number, number];
}

export type EngineOutcome =
  | { ok: true; request: TransformRequest | null; durationMs: number }
  | { ok: false; error: string; durationMs: number };

/** The clock QuickJS reads (through the thread's Date.now), fixed to a run's `now` while it runs. */
export interface FixedClock {
  set(now: number): void;
  clear(): void;
}

/** Why a run failed, as the attempt's error detail says it. */
class RunFailure extends Error {}

const MAX_MESSAGE_CHARS = 1000;
const round = (ms: number) => Math.round(ms * 100) / 100;
const mib = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;

/**
 * Runs transforms on one QuickJS instance, one at a time. Each run gets a new QuickJS runtime
 * (its own heap, with the run's memory limit and interrupt handler) and a new context in it,
 * both disposed after the run: nothing a run leaves behind is seen by the next.
 *
 * `broken` turns true when QuickJS itself failed (an abort, a handle it could not free): the
 * instance must not be used again.
 */
export class Engine {
  broken = false;

  constructor(
    private readonly module: QuickJSWASMModule,
    private readonly clock: ThreadClock,
    private readonly fixedClock: FixedClock,
  ) {}

  /** The instance's WebAssembly memory, which only grows. */
  memoryBytes(): number {
    return this.module.getWasmMemory().buffer.byteLength;
  }

  run(job: EngineJob): EngineOutcome {
    const limits = budgetOf(job, job.input.length);
    const budget = new RunBudget(this.clock, limits.cpuMs, limits.wallStopMs);
    this.fixedClock.set(job.now);
    let runtime: QuickJSRuntime | undefined;
    try {
      runtime = this.module.newRuntime();
      runtime.setMemoryLimit(limits.memoryBytes);
      runtime.setMaxStackSize(SANDBOX_STACK_BYTES);
      runtime.setInterruptHandler(() => budget.exceeded());
      const text = this.runIn(runtime, job, budget);
      const request = checkResult(JSON.parse(text));
      return { ok: true, request, durationMs: round(budget.elapsedMs()) };
    } catch (err) {
      const error = err instanceof RunFailure || err instanceof InvalidResultError ? messageOf(err, budget, limits.memoryBytes) : this.internal(err);
      return { ok: false, error: error.slice(0, MAX_MESSAGE_CHARS), durationMs: round(budget.elapsedMs()) };
    } finally {
      this.fixedClock.clear();
      try {
        runtime?.dispose();
      } catch {
        this.broken = true;
      }
    }
  }

  /** QuickJS failed under the run (a WebAssembly trap, the thread's own stack): the instance is done. */
  private internal(err: unknown): string {
    this.broken = true;
    const why = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    return `the transform stopped the sandbox (${why}); it was restarted`;
  }

  /** The run inside one context; the returned request's JSON text. Throws RunFailure. */
  private runIn(runtime: QuickJSRuntime, job: EngineJob, budget: RunBudget): string {
    return Scope.withScope((scope) => {
      const ctx = scope.manage(runtime.newContext());
      const factory = scope.manage(orFail(ctx, ctx.evalCode(DRIVER_SOURCE, "sandbox.js", { type: "global", strict: true }), budget, "sandbox"));
      const seeds = job.seeds ?? [...crypto.getRandomValues(new Uint32Array(4))];
      const args = [ctx.newString(job.input), ...seeds.map((s) => ctx.newNumber(s))].map((h) => scope.manage(h));
      const driver = scope.manage(orFail(ctx, ctx.callFunction(factory, ctx.undefined, args), budget, "input"));
      const describe = (e: QuickJSHandle) => describeIn(ctx, driver, e);

      scope.manage(orFail(ctx, ctx.evalCode(job.source, "transform.js", { type: "global" }), budget, "load", describe));
      const called = ctx.getString(scope.manage(orFail(ctx, ctx.callMethod(driver, "call"), budget, "call", describe)));
      if (called === "#missing") throw new RunFailure("the source does not define a function named transform");
      const jobs = runtime.executePendingJobs();
      if (jobs.error) {
        scope.manage(jobs.error);
        throw failure(budget, "call", describe(jobs.error));
      }
      const finished = ctx.getString(scope.manage(orFail(ctx, ctx.callMethod(driver, "finish"), budget, "call", describe)));
      return resultText(finished);
    });
  }
}

type Stage = "sandbox" | "input" | "load" | "call";

/** The value of a QuickJS result, or a RunFailure saying what went wrong where. */
function orFail(
  ctx: QuickJSContext,
  result: ReturnType<QuickJSContext["evalCode"]>,
  budget: RunBudget,
  stage: Stage,
  describe?: (e: QuickJSHandle) => string,
): QuickJSHandle {
  if (!result.error) return result.value;
  const error = result.error;
  try {
    const text = describe ? describe(error) : dumped(ctx, error);
    throw failure(budget, stage, text);
  } finally {
    error.dispose();
  }
}

/** An exception inside the sandbox as one line, described by the driver (under the same budget). */
function describeIn(ctx: QuickJSContext, driver: QuickJSHandle, error: QuickJSHandle): string {
  const described = ctx.callMethod(driver, "describe", [error]);
  if (described.error) {
    described.error.dispose();
    return dumped(ctx, error);
  }
  try {
    return ctx.getString(described.value);
  } finally {
    described.value.dispose();
  }
}

/** An exception as QuickJS dumps it, when the driver cannot describe it (memory is short). */
function dumped(ctx: QuickJSContext, error: QuickJSHandle): string {
  try {
    const d = ctx.dump(error) as unknown;
    if (d && typeof d === "object" && "message" in d) return `${String((d as { name?: unknown }).name ?? "Error")}: ${String(d.message)}`;
    return `a thrown ${typeof d}: ${String(d)}`;
  } catch {
    return "an exception that cannot be described";
  }
}

function failure(budget: RunBudget, stage: Stage, text: string): RunFailure {
  if (budget.stopped) return new RunFailure(text); // messageOf words it from the budget.
  if (/^InternalError: out of memory/.test(text)) return new RunFailure("#memory");
  if (/^InternalError: stack overflow/.test(text)) return new RunFailure(`the transform recursed too deeply (stack overflow)${where(text)}`);
  switch (stage) {
    case "sandbox":
      return new RunFailure(`the sandbox could not start: ${text}`);
    case "input":
      return new RunFailure(`the request could not be handed to the transform: ${text}`);
    case "load":
      return new RunFailure(text.startsWith("SyntaxError") ? `the transform does not parse: ${text}` : `the transform's source threw while loading: ${text}`);
    case "call":
      return new RunFailure(`the transform threw ${text}`);
  }
}

const where = (text: string) => / \(line \d+, column \d+\)$/.exec(text)?.[0] ?? "";

/** The message of a failed run: the budget's words when the budget stopped it. */
function messageOf(err: Error, budget: RunBudget, memoryBytes: number): string {
  if (budget.stopped === "cpu") return `the transform used more than ${budget.cpuMs} ms of CPU and was stopped`;
  if (budget.stopped === "wall") return `the transform ran longer than ${budget.wallStopMs} ms and was stopped`;
  if (err.message === "#memory") return `the transform used more than ${mib(memoryBytes)} MiB of memory and was stopped`;
  if (err instanceof InvalidResultError) return `the transform returned an invalid request: ${err.message}`;
  return err.message;
}

/** The returned request's JSON text, or the RunFailure its marker stands for. */
function resultText(finished: string): string {
  if (finished === "#pending") throw new RunFailure("the transform returned a promise that never settled");
  if (finished === "#undefined") throw new RunFailure("the transform returned undefined: return the request to send, or null to skip it");
  if (finished.startsWith("#type:")) {
    throw new RunFailure(`the transform must return the request (an object) or null to skip it, not a ${finished.slice(6)}`);
  }
  if (finished.startsWith("#json:")) {
    const why = finished.slice(6);
    if (why.startsWith("InternalError: out of memory")) throw new RunFailure("#memory");
    throw new RunFailure(`the transform's result cannot be written as JSON: ${why}`);
  }
  if (Buffer.byteLength(finished, "utf8") > MAX_RESULT_JSON_BYTES) {
    throw new RunFailure(`the transform's result is larger than ${MAX_RESULT_JSON_BYTES} bytes of JSON`);
  }
  return finished;
}
