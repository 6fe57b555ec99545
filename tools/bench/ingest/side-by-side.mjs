// Compares two builds of the all-in-one process by server CPU per capture, both loaded at the
// same time (figures only). Alternating builds (compare.mjs) leaves each round to a different
// moment of a shared machine, whose speed swings by a third within minutes; two processes
// loaded side by side share every moment, so the ratio of their CPU per capture holds where
// either figure alone does not (docs/performance.md, "The append's hand-over").
//
//   node tools/bench/ingest/side-by-side.mjs <rounds> <checkout A> <checkout B>
//
// Each checkout holds a built `dist/all-in-one/main.js` (see compare.mjs). Both processes start
// as the launchers start them, get an endpoint, and take SECONDS (default 8) of `wrk -t1
// -c25` each, at once, after a 4 s warm-up, for every round. Printed per round and as medians:
// B's CPU per capture over A's, for the whole process, its main thread, and the rest (the
// store's thread and V8's). Run it both ways round (A B, then B A): the second process
// started has measured up to 2 % dearer in runs of one build against itself.
//
// BENCH_FRESH_IDS=1 sends both new ids in every body; BENCH_FRESH_IDS=B sends them to B only:
// with one checkout as A and B, it prices a provider's new ids against the same body every time.
//
// What a configured feature costs (design §20), with one checkout as A and B: BENCH_ENDPOINT_B
// (or _A) adds JSON fields to that side's endpoint, BENCH_ENV_B (or _A) `NAME=VALUE,...` to that
// side's environment. Each "$SINK" in the fields is the URL of a bare node:http server started
// for that side (its CPU not counted; the side's process then allows loopback targets), as in
// run.mjs:
//
//   BENCH_ENDPOINT_B='{"redact":{"headers":["authorization"]}}' node tools/bench/ingest/side-by-side.mjs 4 . .
//   BENCH_ENV_B=WHC_SCHEMA_LEARNING=false node tools/bench/ingest/side-by-side.mjs 4 . .
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { allInOneEnv, cpuSplit, freePort, startScript, stop, writeWrkScript } from "../harness.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const rounds = Number(process.argv[2]);
const checkouts = process.argv.slice(3, 5).map((dir) => path.resolve(dir));
if (!(rounds > 0) || checkouts.length !== 2) {
  console.error("usage: node tools/bench/ingest/side-by-side.mjs <rounds> <checkout A> <checkout B>");
  process.exit(2);
}
const SECONDS = process.env.SECONDS_EACH ?? "8";
const KEY = `whc_${"B".repeat(40)}`;
const work = mkdtempSync(path.join(os.tmpdir(), "whc-bench-side-by-side-"));
const fresh = process.env.BENCH_FRESH_IDS ?? "";
const scripts = [writeWrkScript(work, fresh === "1"), writeWrkScript(work, fresh === "1" || fresh === "B")];
const run = promisify(execFile);

/** `NAME=VALUE,...` as an object (a value may hold "=", not ","). */
const variables = (list = "") =>
  Object.fromEntries(list ? list.split(",").map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]) : []);

/** Side `name` ("a" or "b"): its process, endpoint and, when its endpoint's fields name "$SINK", its sink. */
async function start(checkout, name) {
  const fields = process.env[`BENCH_ENDPOINT_${name.toUpperCase()}`] ?? "";
  const [gateway, ingest, sinkPort] = [await freePort(), await freePort(), await freePort()];
  const sink = fields.includes("$SINK")
    ? await startScript(path.join(here, "bare-server.mjs"), [String(sinkPort)], {}, "bare ready")
    : undefined;
  const child = await startScript(
    path.join(checkout, "dist/all-in-one/main.js"),
    [],
    {
      ...allInOneEnv(path.join(work, name), gateway, ingest, KEY),
      WHC_METRICS_PORT: "0",
      ...(sink ? { WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true" } : {}),
      ...variables(process.env[`BENCH_ENV_${name.toUpperCase()}`]),
    },
    "webhook-capture ready",
  );
  const res = await fetch(`http://127.0.0.1:${gateway}/v1/endpoints`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ slug: "bench", ...(fields ? JSON.parse(fields.replaceAll("$SINK", `http://127.0.0.1:${sinkPort}/hooks`)) : {}) }),
  });
  const endpoint = await res.json();
  if (!endpoint.webhookUrl) {
    await stopSide({ child, sink });
    throw new Error(`the endpoint was not created: ${JSON.stringify(endpoint)}`);
  }
  return { child, sink, url: endpoint.webhookUrl };
}

/** Requests wrk completed against `url` in `seconds`, with the script of process `which` (0: A, 1: B). */
async function load(url, seconds, which) {
  const { stdout } = await run("wrk", ["-t1", "-c25", `-d${seconds}s`, "-s", scripts[which], url]);
  return Number(/(\d+) requests in/.exec(stdout)[1]);
}

const median = (values) => {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** Stops a side's process and its sink. */
async function stopSide(side) {
  await stop(side.child);
  if (side.sink) await stop(side.sink);
}

const a = await start(checkouts[0], "a");
const b = await start(checkouts[1], "b").catch(async (err) => {
  await stopSide(a);
  throw err;
});
try {
  await Promise.all([load(a.url, 4, 0), load(b.url, 4, 1)]);
  const ratios = { total: [], main: [], rest: [] };
  const configured = (side) =>
    ["ENDPOINT", "ENV"].map((what) => process.env[`BENCH_${what}_${side}`] && ` BENCH_${what}_${side}=${process.env[`BENCH_${what}_${side}`]}`).join("");
  console.log(`A ${checkouts[0]}${configured("A")}\nB ${checkouts[1]}${configured("B")}${fresh ? ` (BENCH_FRESH_IDS=${fresh})` : ""}\n${SECONDS} s each round, wrk -t1 -c25 on each at once; µs of CPU per capture\n`);
  for (let round = 1; round <= rounds; round += 1) {
    const before = [cpuSplit(a.child.pid), cpuSplit(b.child.pid)];
    const counts = await Promise.all([load(a.url, SECONDS, 0), load(b.url, SECONDS, 1)]);
    const after = [cpuSplit(a.child.pid), cpuSplit(b.child.pid)];
    const per = [0, 1].map((i) => ({
      total: ((after[i].total - before[i].total) * 1e6) / counts[i],
      main: ((after[i].main - before[i].main) * 1e6) / counts[i],
    }));
    for (const p of per) p.rest = p.total - p.main;
    for (const k of Object.keys(ratios)) ratios[k].push(per[1][k] / per[0][k]);
    const show = (p, n) => `${p.total.toFixed(0)} (main ${p.main.toFixed(0)}, rest ${p.rest.toFixed(0)}; ${n} captures)`;
    console.log(`round ${round}: A ${show(per[0], counts[0])}, B ${show(per[1], counts[1])}, B/A ${(per[1].total / per[0].total).toFixed(3)}`);
  }
  const fmt = (k) => `${median(ratios[k]).toFixed(3)} (${ratios[k].map((r) => r.toFixed(3)).join(", ")})`;
  console.log(`\nB/A, median of ${rounds}: total ${fmt("total")}\n  main thread ${fmt("main")}\n  the rest ${fmt("rest")}`);
} finally {
  await stopSide(a);
  await stopSide(b);
  rmSync(work, { recursive: true, force: true });
}
