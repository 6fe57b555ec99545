import {
  Scope,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSWASMModule,
} from "quickjs-emscripten";
import { DESCRIBE_SOURCE, DRIVER_SOURCE } from "./driver.js";
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
  /** Seeds Math.random (QuickJS's own generator); a fresh random one when absent. */
  seed?: number;
}

export type EngineOutcome =
  | { ok: true; request: TransformRequest | null; durationMs: number }
  | { ok: false; error: string; durationMs: number };

/** The clock QuickJS reads (through the thread's Date.now), fixed while a run runs. */
export interface FixedClock {
  set(now: number): void;
  clear(): void;
}

/** Why a run failed, as the attempt's error detail says it. */
class RunFailure extends Error {}

const MAX_MESSAGE_CHARS = 1000;

/** A clock reading in ms for the seed: 40 random bits (QuickJS's seed is it times 1000, in 64 bits). */
function randomSeed(): number {
  const [high, low] = crypto.getRandomValues(new Uint32Array(2));
  return (high! & 0xff) * 2 ** 32 + low!;
}
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
      // QuickJS seeds Math.random from the clock when a context is made: a random reading then, so
      // runs at the same `now` do not draw the same numbers; `now` for every reading after.
      this.fixedClock.set(job.seed ?? randomSeed());
      const ctx = scope.manage(runtime.newContext());
      this.fixedClock.set(job.now);
      const value = (result: Result, stage: Stage) => scope.manage(orFail(ctx, result, budget, stage));
      const factory = value(ctx.evalCode(DRIVER_SOURCE, "sandbox.js", { type: "global", strict: true }), "sandbox");
      const driver = value(ctx.callFunction(factory, ctx.undefined, scope.manage(ctx.newString(job.input))), "input");

      value(ctx.evalCode(job.source, "transform.js", { type: "global" }), "load");
      if (ctx.getString(value(ctx.callMethod(driver, "call"), "call")) === "#missing") {
        throw new RunFailure("the source does not define a function named transform");
      }
      const jobs = runtime.executePendingJobs();
      if (jobs.error) throw failureOf(ctx, jobs.error, budget, "call");
      const finished = ctx.getString(value(ctx.callMethod(driver, "finish"), "call"));
      // What the promise rejected with, or what writing the JSON threw, is thrown again to be described.
      if (finished === "#rejected") value(ctx.callMethod(driver, "failure"), "call");
      if (finished === "#json") value(ctx.callMethod(driver, "failure"), "json");
      return resultText(finished);
    });
  }
}

type Stage = "sandbox" | "input" | "load" | "call" | "json";
type Result = ReturnType<QuickJSContext["evalCode"]>;

/** The value of a QuickJS result, or a RunFailure saying what went wrong where. */
function orFail(ctx: QuickJSContext, result: Result, budget: RunBudget, stage: Stage): QuickJSHandle {
  if (result.error) throw failureOf(ctx, result.error, budget, stage);
  return result.value;
}

/** The RunFailure for an exception from the sandbox (disposed here). */
function failureOf(ctx: QuickJSContext, error: QuickJSHandle, budget: RunBudget, stage: Stage): RunFailure {
  try {
    // Nothing of the transform's runs once its budget is spent; before the source, nothing of it exists.
    const text = budget.stopped ? "" : stage === "sandbox" || stage === "input" ? dumped(ctx, error) : describe(ctx, error);
    return failure(budget, stage, text);
  } finally {
    error.dispose();
  }
}

/** An exception inside the sandbox as one line, described there (under the same budget). */
function describe(ctx: QuickJSContext, error: QuickJSHandle): string {
  const fn = ctx.evalCode(DESCRIBE_SOURCE, "sandbox.js", { type: "global", strict: true });
  if (fn.error) {
    fn.error.dispose();
    return dumped(ctx, error);
  }
  const described = ctx.callFunction(fn.value, ctx.undefined, error);
  fn.value.dispose();
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

/** An exception as QuickJS dumps it, when it cannot be described inside (memory is short). */
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
    case "json":
      return new RunFailure(`the transform's result cannot be written as JSON: ${text}`);
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
  if (Buffer.byteLength(finished, "utf8") > MAX_RESULT_JSON_BYTES) {
    throw new RunFailure(`the transform's result is larger than ${MAX_RESULT_JSON_BYTES} bytes of JSON`);
  }
  return finished;
}
