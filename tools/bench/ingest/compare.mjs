// Compares builds of the all-in-one process by server CPU per capture, in one run, alternated
// with a bare node:http server (figures only). What tells a real cost from this machine's drift:
// the same build measured at different hours of one day gave 240 and 340 µs per capture, while
// builds alternated within one run differ by what they do (docs/performance.md, "Part three
// measured against its base").
//
//   node tools/bench/ingest/compare.mjs <rounds> <checkout>[:NAME=VALUE,...] ...
//
// Each checkout is a directory holding a built `dist/all-in-one/main.js` (a `git worktree` at
// the commit, with `node tools/build.mjs all-in-one --no-dashboard` run in it); `:NAME=VALUE`
// starts that build with these variables set too (`.:WHC_SCHEMA_LEARNING=false`), and
// `:NODE_ARGS=...` with these options before its script (V8 flags NODE_OPTIONS refuses,
// `.:NODE_ARGS=--single-threaded-gc`). Each round
// measures bare, then every build (in reverse order every other round), each for WARM seconds
// (default 10) before MEASURE seconds (default 10) of wrk -t2 -c50 with the benchmark's 1.5 KB
// JSON event; CPU is the process's, all threads, from /proc, split into its main thread and
// the rest (the catalog's store thread, mostly).
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { allInOneEnv, cpuSplit, freePort, startProgram, startScript as start, stop, writeWrkScript } from "../harness.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const rounds = Number(process.argv[2]);
const builds = process.argv.slice(3).map((arg) => {
  const [dir, vars = ""] = arg.split(":");
  const env = Object.fromEntries(vars ? vars.split(",").map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]) : []);
  return { name: arg, main: path.resolve(dir, "dist/all-in-one/main.js"), env };
});
if (!(rounds > 0) || builds.length === 0) {
  console.error("usage: node tools/bench/ingest/compare.mjs <rounds> <checkout>[:NAME=VALUE,...] ...");
  process.exit(2);
}
const WARM = process.env.WARM ?? "10";
const MEASURE = process.env.MEASURE ?? "10";
const KEY = `whc_${"B".repeat(40)}`;
const work = mkdtempSync(path.join(os.tmpdir(), "whc-bench-compare-"));
const script = writeWrkScript(work);

async function measure(child, url) {
  execFileSync("wrk", ["-t2", "-c50", `-d${WARM}s`, "-s", script, url]);
  const before = cpuSplit(child.pid);
  const out = execFileSync("wrk", ["-t2", "-c50", `-d${MEASURE}s`, "-s", script, url], { encoding: "utf8" });
  const after = cpuSplit(child.pid);
  const n = Number(/(\d+) requests in/.exec(out)[1]);
  return { total: ((after.total - before.total) * 1e6) / n, main: ((after.main - before.main) * 1e6) / n, perSecond: n / Number(MEASURE) };
}

const results = new Map([["bare", []], ...builds.map((b) => [b.name, []])]);
for (let round = 0; round < rounds; round += 1) {
  const port = await freePort();
  const bare = await start(path.join(here, "bare-server.mjs"), [String(port)], {}, "bare ready");
  results.get("bare").push(await measure(bare, `http://127.0.0.1:${port}/`));
  await stop(bare);
  for (const build of round % 2 ? [...builds].reverse() : builds) {
    const [gw, ing] = [await freePort(), await freePort()];
    const dataDir = path.join(work, `data-${round}`);
    const { NODE_ARGS: nodeArgs, ...env } = build.env;
    const aio = nodeArgs
      ? await startProgram(process.execPath, [...nodeArgs.split(" "), build.main], { ...allInOneEnv(dataDir, gw, ing, KEY), ...env }, "webhook-capture ready")
      : await start(build.main, [], { ...allInOneEnv(dataDir, gw, ing, KEY), ...env }, "webhook-capture ready");
    const created = await fetch(`http://127.0.0.1:${gw}/v1/endpoints`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ slug: "bench" }),
    });
    const endpoint = await created.json();
    results.get(build.name).push(await measure(aio, endpoint.webhookUrl));
    await stop(aio);
    rmSync(dataDir, { recursive: true, force: true });
  }
  console.log(`round ${round + 1}: ${[...results].map(([name, rs]) => `${name} ${Math.round(rs.at(-1).total)} µs`).join(", ")}`);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const bareMedian = median(results.get("bare").map((r) => r.total));
console.log(`\nCPU per capture, median of ${rounds} (${WARM} s warm-up, ${MEASURE} s measured each):`);
for (const [name, rs] of results) {
  const totals = rs.map((r) => r.total);
  const multiple = name === "bare" ? "" : `  ${(median(totals) / bareMedian).toFixed(2)}x bare; main thread ${Math.round(median(rs.map((r) => r.main)))} µs`;
  console.log(`  ${name.padEnd(32)} ${Math.round(median(totals))} µs (${totals.map(Math.round).join(", ")}), ${Math.round(median(rs.map((r) => r.perSecond)))}/s${multiple}`);
}
rmSync(work, { recursive: true, force: true });
