// Distributed benchmark (issue 20): the services as separate processes (the built dist/, as
// `npm run start:distributed` runs them) with their own nats-server, first with one catalog,
// then with two catalog replicas over the one embedded store (each with its own ingest, so
// both catalogs take appends). 1.5 KB POSTs at 50 connections in all for N seconds, after a
// warm-up pass of the same length. Prints captures/s, p50/p99, the CPU per capture of each
// process (utime + stime of all its threads from /proc/<pid>/task/*/stat over the measured
// seconds) and, for the busy ones, how much of it was the main thread, other threads and the
// kernel; ingest's AppendEvents calls and captures per call; and whether every acknowledged
// capture is stored and listed in order. Figures only, no assertion.
//
//   node tools/bench/distributed/run.mjs [seconds] [connections] [layouts, default 1,2]
//
// A layout is a number of catalogs, each with its own ingest ("2"), or catalogs x ingests
// ("1x2": two ingests on one catalog, the control that tells the second catalog's effect from
// the second ingest's); the i-th ingest calls catalog i modulo the catalogs. "aio" is the
// all-in-one process under the same load: the reference this machine gives for the same work
// in one process (the issue's figures: 645 µs distributed against 170 µs all-in-one, target
// 260 µs). After the runs, each distributed layout's CPU per capture is printed as a multiple of
// the all-in-one's from the same run.
//
// BENCH_RATE=N paces every layout at N captures/s in all (autocannon), to compare layouts
// doing the same work per second instead of each at its own full load.
//
// The load comes from wrk (-t1 per ingest) when it is installed, else from autocannon in this
// process (its CPU then shares the machine with the services); BENCH_CLIENT=autocannon forces
// the latter. With several ingests the connections are split between them and the latencies
// combined as the request-weighted mean of the p50s and the largest p99.
import { spawn, execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { cpuSplit, freePort, startProgram, startScript, stop, writeWrkScript, wrkSummary } from "../harness.mjs";
import { body, headers } from "../ingest/payload.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const duration = Number(process.argv[2] ?? 10);
const connections = Number(process.argv[3] ?? 50);
const layouts = (process.argv[4] ?? "1,2").split(",").map((l) => {
  if (l === "aio") return { aio: true, catalogs: 0, ingests: 1 };
  const [catalogs, ingests = catalogs] = l.split("x").map(Number);
  return { catalogs, ingests };
});
const KEY = `whc_${"R".repeat(40)}`;
// BENCH_RATE=N: every layout driven at the same N captures/s in all (autocannon's overallRate,
// split over the ingests), so that layouts are compared doing the same work per second; at full
// load the all-in-one process takes about twice the captures/s of the services, and a busier
// process spends less per capture on waking up.
const rate = process.env.BENCH_RATE ? Number(process.env.BENCH_RATE) : undefined;
const useWrk = rate === undefined && process.env.BENCH_CLIENT !== "autocannon" && spawnSync("wrk", ["--version"]).error === undefined;

const work = mkdtempSync(path.join(os.tmpdir(), "whc-bench-distributed-"));
const script = writeWrkScript(work);

/** One load pass on one URL: {total, failed, seconds, p50, p99 (ms)}. */
async function loadOne(url, conns, share) {
  if (useWrk) {
    const out = await new Promise((resolve, reject) => {
      const child = spawn("wrk", ["-t1", `-c${conns}`, `-d${duration}s`, "-s", script, url], { stdio: ["ignore", "pipe", "inherit"] });
      let text = "";
      child.stdout.on("data", (c) => (text += c));
      child.on("exit", (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited ${code}`))));
    });
    return wrkSummary(out);
  }
  const r = await new Promise((resolve, reject) => {
    const paced = rate === undefined ? {} : { overallRate: Math.round(rate * share) };
    autocannon({ url, method: "POST", connections: conns, duration, headers, body, ...paced }, (err, res) => (err ? reject(err) : resolve(res)));
  });
  return { total: r.requests.total, failed: r.non2xx + r.errors, seconds: r.duration, p50: r.latency.p50, p99: r.latency.p99 };
}

/** The connections split between the URLs, all at once; the passes' figures combined. */
async function load(urls) {
  const parts = await Promise.all(urls.map((url, i) => loadOne(url, Math.floor(connections / urls.length) + (i < connections % urls.length ? 1 : 0), 1 / urls.length)));
  const total = parts.reduce((n, p) => n + p.total, 0);
  return {
    total,
    failed: parts.reduce((n, p) => n + p.failed, 0),
    rps: parts.reduce((n, p) => n + p.total / p.seconds, 0),
    p50: parts.reduce((n, p) => n + p.p50 * p.total, 0) / Math.max(total, 1),
    p99: Math.max(...parts.map((p) => p.p99)),
  };
}

/** Every stored event of the endpoint, newest first, through the API: is it in strict order? */
async function listed(api, auth, endpointId) {
  let before = "";
  let count = 0;
  let ordered = true;
  let last;
  for (;;) {
    const page = await (await fetch(`${api}/v1/endpoints/${endpointId}/events?limit=200${before}`, { headers: auth })).json();
    for (const item of page.items) {
      const at = Date.parse(item.receivedAt);
      if (last && !(at < last.at || (at === last.at && item.id < last.id))) ordered = false;
      last = { at, id: item.id };
      count += 1;
    }
    if (!page.nextBefore) return { count, ordered };
    before = `&before=${encodeURIComponent(page.nextBefore)}&beforeId=${page.nextBeforeId}`;
  }
}

/** Ingest's group commits so far, summed over the ingests (their metrics ports): calls made and captures sent in them. */
async function batchFigures(metricsUrls) {
  let count = 0;
  let sum = 0;
  for (const url of metricsUrls) {
    const res = await fetch(`${url}/metrics`);
    if (!res.ok) return { count: Number.NaN, sum: Number.NaN };
    const text = await res.text();
    count += Number(/^whc_ingest_batch_events_count (\S+)$/m.exec(text)?.[1] ?? Number.NaN);
    sum += Number(/^whc_ingest_batch_events_sum (\S+)$/m.exec(text)?.[1] ?? Number.NaN);
  }
  return { count, sum };
}

let deployments = 0;
/** Each measured layout's services CPU per capture, for the comparison at the end. */
const perCaptureFigures = [];

/** The all-in-one process (as `npm start` runs it) on a fresh data directory. */
async function allInOne() {
  deployments += 1;
  const dataDir = path.join(work, `data-${deployments}-aio`);
  mkdirSync(dataDir);
  const [gateway, ingest, metrics] = [String(await freePort()), String(await freePort()), String(await freePort())];
  const env = {
    WHC_HOST: "127.0.0.1",
    WHC_DATA_DIR: dataDir,
    WHC_BOOTSTRAP_API_KEYS: `bench:${KEY}`,
    // One key reads the whole run back: the per-key rate (ADR 0035) is not what this measures.
    WHC_QUOTA_API_RPS: "1000000",
    WHC_GATEWAY_PORT: gateway,
    WHC_INGEST_PORT: ingest,
    WHC_METRICS_PORT: metrics,
    WHC_INGEST_PUBLIC_URL: `http://127.0.0.1:${ingest}`,
    WHC_LOG_LEVEL: "info",
  };
  const child = await startScript(path.join(root, "dist", "all-in-one", "main.js"), [], env, "webhook-capture ready");
  return {
    procs: [{ name: "all-in-one", child }],
    api: `http://127.0.0.1:${gateway}`,
    ingestUrls: [`http://127.0.0.1:${ingest}`],
    metricsUrls: [`http://127.0.0.1:${metrics}`],
  };
}

/** The deployment of a layout: its catalogs over one store, its ingests spread over them. */
async function deployment({ aio, catalogs: catalogCount, ingests: ingestCount }, natsUrl) {
  if (aio) return allInOne();
  // A fresh store each time, also when a layout is given twice to alternate ("1,2,1,2").
  deployments += 1;
  const dataDir = path.join(work, `data-${deployments}-${catalogCount}x${ingestCount}`);
  mkdirSync(dataDir);
  const port = async () => String(await freePort());
  const ports = { crypto: await port(), replay: await port(), gateway: await port() };
  const catalogPorts = [];
  const ingestPorts = [];
  for (let i = 0; i < catalogCount; i += 1) catalogPorts.push(await port());
  for (let i = 0; i < ingestCount; i += 1) ingestPorts.push(await port());
  const ingestMetricsPorts = [];
  for (let i = 0; i < ingestCount; i += 1) ingestMetricsPorts.push(await port());
  const env = {
    WHC_HOST: "127.0.0.1",
    WHC_DATA_DIR: dataDir,
    WHC_NATS_URL: natsUrl,
    WHC_INTERNAL_TOKEN: randomBytes(32).toString("hex"),
    // Only the ingests' metrics are read; the others get no metrics port (they share a machine).
    WHC_METRICS_PORT: "0",
    WHC_BOOTSTRAP_API_KEYS: `bench:${KEY}`,
    // One key reads the whole run back: the per-key rate (ADR 0035) is not what this measures.
    WHC_QUOTA_API_RPS: "1000000",
    WHC_CRYPTO_PORT: ports.crypto,
    WHC_REPLAY_PORT: ports.replay,
    WHC_GATEWAY_PORT: ports.gateway,
    WHC_CATALOG_PORT: catalogPorts[0],
    WHC_INGEST_PORT: ingestPorts[0],
    WHC_CATALOG_URL: `http://127.0.0.1:${catalogPorts[0]}`,
    WHC_CRYPTO_URL: `http://127.0.0.1:${ports.crypto}`,
    WHC_REPLAY_URL: `http://127.0.0.1:${ports.replay}`,
    WHC_INGEST_PUBLIC_URL: `http://127.0.0.1:${ingestPorts[0]}`,
    WHC_LOG_LEVEL: "info",
  };
  const run = (service, extra = {}) => startScript(path.join(root, "dist", service, "main.js"), [], { ...env, ...extra }, `${service} ready`);
  const procs = [];
  // The catalogs together: both open (and migrate) the new file at once.
  const catalogs = await Promise.all(catalogPorts.map((p) => run("catalog", { WHC_CATALOG_PORT: p })));
  catalogs.forEach((child, i) => procs.push({ name: `catalog ${i + 1}`, child }));
  procs.push({ name: "crypto", child: await run("crypto") });
  procs.push({ name: "replay", child: await run("replay") });
  const ingests = await Promise.all(
    ingestPorts.map((p, i) =>
      run("ingest", { WHC_INGEST_PORT: p, WHC_METRICS_PORT: ingestMetricsPorts[i], WHC_CATALOG_URL: `http://127.0.0.1:${catalogPorts[i % catalogCount]}` }),
    ),
  );
  ingests.forEach((child, i) => procs.push({ name: `ingest ${i + 1}`, child }));
  procs.push({ name: "gateway", child: await run("gateway") });
  return {
    procs,
    api: `http://127.0.0.1:${ports.gateway}`,
    ingestUrls: ingestPorts.map((p) => `http://127.0.0.1:${p}`),
    metricsUrls: ingestMetricsPorts.map((p) => `http://127.0.0.1:${p}`),
  };
}

execFileSync(process.execPath, [path.join(root, "tools/build.mjs"), "all-in-one", "catalog", "crypto", "replay", "ingest", "gateway", "--no-dashboard"], {
  stdio: "inherit",
});
const natsPort = await freePort();
const nats = await startProgram("nats-server", ["-a", "127.0.0.1", "-p", String(natsPort)], {}, "Server is ready");
console.log(
  `\n${duration} s (after a warm-up pass as long) at ${connections} connections, ${Buffer.byteLength(body)} B bodies; ` +
    `${os.cpus().length} cores; load from ${useWrk ? "wrk -t1 per ingest" : "autocannon (in this process)"}${rate === undefined ? "" : `, paced at ${rate} captures/s in all`}\n`,
);

for (const layout of layouts) {
  const d = await deployment(layout, `nats://127.0.0.1:${natsPort}`);
  const auth = { authorization: `Bearer ${KEY}` };
  const endpoint = await (
    await fetch(`${d.api}/v1/endpoints`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ slug: "bench" }),
    })
  ).json();
  const hookPath = new URL(endpoint.webhookUrl).pathname;
  const urls = d.ingestUrls.map((origin) => `${origin}${hookPath}`);

  const warmUp = await load(urls);
  const before = d.procs.map((p) => cpuSplit(p.child.pid));
  const batchesBefore = await batchFigures(d.metricsUrls);
  const r = await load(urls);
  const split = d.procs.map((p, i) => {
    const now = cpuSplit(p.child.pid);
    return { total: now.total - before[i].total, main: now.main - before[i].main, system: now.system - before[i].system, faults: now.faults - before[i].faults };
  });
  const used = split.map((s) => s.total);
  const batchesAfter = await batchFigures(d.metricsUrls);
  const calls = batchesAfter.count - batchesBefore.count;
  const batched = batchesAfter.sum - batchesBefore.sum;
  const acknowledged = warmUp.total - warmUp.failed + r.total - r.failed;
  const list = await listed(d.api, auth, endpoint.id);

  const perCapture = (seconds) => `${Math.round((seconds / r.total) * 1e6)} µs`;
  const services = used.reduce((a, b) => a + b, 0);
  const plural = (n, word) => `${n} ${word}${n > 1 ? "s" : ""}`;
  console.log(layout.aio ? "all-in-one:" : `${plural(layout.catalogs, "catalog")}, ${plural(layout.ingests, "ingest")}:`);
  perCaptureFigures.push({ layout, us: (services / r.total) * 1e6 });
  console.log(`  ${Math.round(r.rps)} captures/s   p50 ${r.p50.toFixed(1)} ms   p99 ${r.p99.toFixed(1)} ms   failed ${r.failed}`);
  if (Number.isFinite(calls)) console.log(`  AppendEvents calls: ${calls}, ${(batched / Math.max(calls, 1)).toFixed(1)} captures per call on average`);
  console.log(`  CPU per capture: ${d.procs.map((p, i) => `${p.name} ${perCapture(used[i])}`).join(", ")}; services ${perCapture(services)}`);
  const busy = d.procs.map((p, i) => ({ name: p.name, ...split[i] })).filter((p) => p.total / r.total > 5e-6);
  console.log(
    `  of which: ${busy.map((p) => `${p.name} main thread ${perCapture(p.main)}, other threads ${perCapture(p.total - p.main)}, in the kernel ${perCapture(p.system)}, page faults ${(p.faults / r.total).toFixed(1)}`).join("; ")}`,
  );
  console.log(
    `  ${acknowledged} captures acknowledged, ${list.count} listed, ${list.ordered ? "in strict (receivedAt, id) order" : "OUT OF ORDER"}` +
      `${list.count >= acknowledged ? "" : ": FEWER LISTED THAN ACKNOWLEDGED"}\n`,
  );
  await Promise.all(d.procs.map((p) => stop(p.child)));
}

const reference = perCaptureFigures.filter((f) => f.layout.aio).map((f) => f.us);
if (reference.length > 0) {
  const aio = reference.reduce((a, b) => a + b, 0) / reference.length;
  console.log(`all-in-one: ${Math.round(aio)} µs per capture (mean of ${reference.length}); each distributed layout's services as a multiple of it:`);
  for (const f of perCaptureFigures.filter((x) => !x.layout.aio)) {
    console.log(`  ${f.layout.catalogs}x${f.layout.ingests}: ${Math.round(f.us)} µs = ${(f.us / aio).toFixed(2)}x (the issue's target: 260 / 170 = 1.53x)`);
  }
}

await stop(nats);
rmSync(work, { recursive: true, force: true });
