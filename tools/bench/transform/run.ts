// Transform sandbox benchmark (issue #32, ADR 0075): what a destination's transform costs.
// Prints the engine alone (QuickJS in WebAssembly on this thread), then through
// TransformSandbox (worker threads): a thread's start, a run's latency and CPU (all threads, and
// this thread's share: what an ingest event loop pays), throughput on two threads, requests of
// 2 KiB to 1 MiB, what hostile transforms cost before they are stopped, and memory after many
// runs. Figures, not assertions; CPU times are read from /proc, so they hold on a busy machine.
//   npx tsx --tsconfig tsconfig.base.json tools/bench/transform/run.ts [runs]
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { newQuickJSWASMModule, RELEASE_SYNC } from "quickjs-emscripten";
import { MARSHAL_MS_PER_MIB, TransformSandbox, toTransformRequest, type TransformRequest } from "@whc/transform-sandbox";

const RUNS = Number(process.argv[2] ?? 2000);
const encoder = new TextEncoder();

/** This thread's CPU time in ms (Linux). */
const threadCpu = () => Number(readFileSync("/proc/thread-self/schedstat", "latin1").split(" ")[0]) / 1e6;
/** The process's CPU time in ms, every thread. */
const processCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const ms = (n: number) => `${n.toFixed(n < 1 ? 3 : n < 10 ? 2 : 1)} ms`;
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
const line = (label: string, value: string) => console.log(`${label.padEnd(58)} ${value}`);

const stripeEvent = {
  id: "evt_1NxYz2LkdIwHu7ix3Zl5Yv8s",
  object: "event",
  type: "invoice.paid",
  created: 1700000000,
  data: {
    object: {
      id: "in_1NxYz2LkdIwHu7ix",
      object: "invoice",
      amount_due: 2000,
      currency: "usd",
      customer: "cus_OlZ2",
      lines: { data: Array.from({ length: 8 }, (_, i) => ({ id: `il_${i}`, amount: 250, description: "1 × Pro plan (at $20.00 / month)" })) },
      metadata: { order: "6735" },
      status: "paid",
    },
  },
};
const request = (body: unknown): TransformRequest =>
  toTransformRequest({
    method: "POST",
    path: "/hooks/stripe",
    query: "",
    headers: [["content-type", "application/json"], ["stripe-signature", "t=1700000000,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd"], ["user-agent", "Stripe/1.0"]],
    body: encoder.encode(JSON.stringify(body)),
  });
const TRIVIAL = "function transform(req) { req.headers['x-env'] = ['prod']; return req; }";
const TYPICAL = `function transform(req) {
  const o = req.body.data.object;
  req.body = { kind: req.body.type, total: o.lines.data.reduce((s, l) => s + l.amount, 0), order: o.metadata.order, at: new Date().toISOString() };
  req.headers['x-source'] = ['stripe'];
  delete req.headers['stripe-signature'];
  return req;
}`;

async function engineAlone(): Promise<void> {
  console.log("\n# The engine alone (quickjs-emscripten release-sync, this thread)");
  let t = performance.now();
  const module = await newQuickJSWASMModule(RELEASE_SYNC);
  line("instantiate the WebAssembly module", ms(performance.now() - t));
  const input = JSON.stringify(request(stripeEvent));
  const once = (source: string) => {
    const runtime = module.newRuntime();
    runtime.setMemoryLimit(16 << 20);
    runtime.setInterruptHandler(() => false);
    const ctx = runtime.newContext();
    const h = ctx.newString(input);
    ctx.setProp(ctx.global, "input", h);
    h.dispose();
    const r = ctx.evalCode(`${source}\n;JSON.stringify(transform(JSON.parse(input)))`, "t.js", { type: "global" });
    (r.error ?? r.value).dispose();
    ctx.dispose();
    runtime.dispose();
  };
  for (let i = 0; i < 300; i += 1) once(TRIVIAL);
  const n = Math.min(RUNS, 2000);
  t = threadCpu();
  for (let i = 0; i < n; i += 1) module.newRuntime().dispose();
  line("a new runtime (heap), disposed", ms((threadCpu() - t) / n));
  t = threadCpu();
  for (let i = 0; i < n; i += 1) {
    const runtime = module.newRuntime();
    runtime.newContext().dispose();
    runtime.dispose();
  }
  line("a new runtime and context, disposed", ms((threadCpu() - t) / n));
  t = threadCpu();
  for (let i = 0; i < n; i += 1) once(TRIVIAL);
  line("a trivial transform, 1.7 KB event in and out (CPU)", ms((threadCpu() - t) / n));
  t = threadCpu();
  for (let i = 0; i < n; i += 1) once(TYPICAL);
  line("a typical transform (reshapes the event) (CPU)", ms((threadCpu() - t) / n));
}

async function sandboxRuns(): Promise<void> {
  console.log("\n# Through TransformSandbox (worker threads)");
  const sandbox = new TransformSandbox({ threads: 1 });
  const req = request(stripeEvent);
  let wall = performance.now();
  let cpu = processCpu();
  const first = await sandbox.run(TRIVIAL, req);
  line("first run: thread start (+ worker script, warm-up), wall", ms(performance.now() - wall));
  line("first run: thread start, CPU of the process", ms(processCpu() - cpu));
  line("first run: its own durationMs", ms(first.durationMs));
  for (let i = 0; i < 200; i += 1) await sandbox.run(TRIVIAL, req);
  for (const [name, source] of [["trivial", TRIVIAL], ["typical", TYPICAL]] as const) {
    const latencies: number[] = [];
    const durations: number[] = [];
    cpu = processCpu();
    const host = threadCpu();
    for (let i = 0; i < RUNS; i += 1) {
      const t = performance.now();
      const outcome = await sandbox.run(source, req);
      latencies.push(performance.now() - t);
      durations.push(outcome.durationMs);
    }
    latencies.sort((a, b) => a - b);
    durations.sort((a, b) => a - b);
    line(`${name}: run() to outcome, p50 / p99 (wall)`, `${ms(pct(latencies, 50))} / ${ms(pct(latencies, 99))}`);
    line(`${name}: durationMs in the thread, p50 / p99 (wall)`, `${ms(pct(durations, 50))} / ${ms(pct(durations, 99))}`);
    line(`${name}: CPU per run, all threads`, ms((processCpu() - cpu) / RUNS));
    line(`${name}: CPU per run, the calling thread`, ms((threadCpu() - host) / RUNS));
  }
  await sandbox.close();

  const two = new TransformSandbox({ threads: 2 });
  await Promise.all([two.run(TRIVIAL, req), two.run(TRIVIAL, req)]);
  wall = performance.now();
  await Promise.all(Array.from({ length: RUNS }, () => two.run(TYPICAL, req)));
  line("throughput, two threads, typical transform", `${Math.round(RUNS / ((performance.now() - wall) / 1000))} runs/s`);
  await two.close();
}

async function sizes(): Promise<void> {
  console.log("\n# Request size (a transform adding a header; CPU of the process per run, and its budget)");
  const sandbox = new TransformSandbox({ threads: 1, cpuMs: 5000 });
  for (const bytes of [2 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20]) {
    const items: unknown[] = [];
    while (JSON.stringify(items).length < bytes) items.push(stripeEvent);
    const req = request({ items });
    await sandbox.run(TRIVIAL, req);
    const n = bytes > 1 << 20 ? 3 : 10;
    const cpu = processCpu();
    for (let i = 0; i < n; i += 1) await sandbox.run(TRIVIAL, req);
    const size = JSON.stringify(req).length;
    const budget = 50 + Math.round((size / 1048576) * MARSHAL_MS_PER_MIB);
    line(`${Math.round(size / 1024)} KiB of request JSON`, `${ms((processCpu() - cpu) / n)} CPU (budget ${budget} ms)`);
  }
  await sandbox.close();
}

async function hostile(): Promise<void> {
  console.log("\n# Hostile transforms: until the outcome (wall), and CPU of the process");
  const sandbox = new TransformSandbox({ threads: 1 });
  const req = request(stripeEvent);
  await sandbox.run(TRIVIAL, req);
  const cases: Array<[string, string]> = [
    ["infinite loop", "function transform(req) { for (;;) {} }"],
    ["new Array(1e9).fill(1)", "function transform(req) { return new Array(1e9).fill(1); }"],
    ["objects until memory runs out", "function transform(req) { const a = []; for (;;) a.push({ n: a.length }); }"],
    ["deep recursion", "function transform(req) { return transform(req); }"],
    ["1 MiB strings until memory runs out (host backstop)", "function transform(req) { const a = []; for (;;) a.push('x'.repeat(1 << 20) + a.length); }"],
  ];
  for (const [name, source] of cases) {
    const wall = performance.now();
    const cpu = processCpu();
    const outcome = await sandbox.run(source, req);
    const error = outcome.ok ? "ok?" : outcome.error.replace(/^the transform /, "");
    line(name, `${ms(performance.now() - wall)} wall, ${ms(processCpu() - cpu)} CPU: ${error.slice(0, 60)}`);
  }
  const wall = performance.now();
  const cpu = processCpu();
  await sandbox.run(TRIVIAL, req);
  line("the next run after a stopped thread (a new thread starts)", `${ms(performance.now() - wall)} wall, ${ms(processCpu() - cpu)} CPU`);
  await sandbox.close();
}

async function memory(): Promise<void> {
  console.log("\n# Memory (RSS of the process)");
  const before = process.memoryUsage().rss;
  const sandbox = new TransformSandbox({ threads: 2 });
  const req = request(stripeEvent);
  const big = "function transform(req) { const a = []; for (let i = 0; i < 12; i++) a.push('x'.repeat(1 << 20) + i); return req; }";
  await Promise.all([sandbox.run(TRIVIAL, req), sandbox.run(TRIVIAL, req)]);
  const started = process.memoryUsage().rss;
  line("two threads started", `+${Math.round((started - before) / 1048576)} MiB`);
  for (let i = 0; i < RUNS; i += 1) await sandbox.run(i % 20 === 0 ? big : TYPICAL, req);
  line(`after ${RUNS} runs, one in 20 using 12 MiB`, `+${Math.round((process.memoryUsage().rss - before) / 1048576)} MiB`);
  await sandbox.close();
}

await engineAlone();
await sandboxRuns();
await sizes();
await hostile();
await memory();
