// Light load: what one request at a time costs (docs/performance.md, "What a store call costs
// when its thread is idle"). A developer's one webhook and a dashboard's page meet a process
// whose threads sleep between requests; the other benchmarks load it with 25-50 connections,
// where batching hides the hand-offs. Sends `requests` requests one after another (after 30
// unmeasured) over one kept-alive connection to a bare node:http server, then, for each checkout
// given, to the all-in-one process: captures (the benchmark's 1.5 KB event) and API reads (`GET
// /v1/endpoints/{id}`). Prints the wait (p50/p99) and the server's CPU per request from /proc
// (all threads; the main thread beside it), captures as a multiple of bare's. Figures only.
//
//   node tools/bench/ingest/lone.mjs [requests] [checkout ...]
//
// Each checkout holds a built `dist/all-in-one/main.js` (default: this one, built first).
import { execFileSync } from "node:child_process";
import http from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { cpuSplit, freePort, startAllInOne, startScript, stop } from "../harness.mjs";
import { body, headers } from "./payload.mjs";

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const requests = Number(process.argv[2] ?? 1000);
const checkouts = process.argv.length > 3 ? process.argv.slice(3).map((c) => path.resolve(c)) : [here];
if (process.argv.length <= 3) execFileSync(process.execPath, [path.join(here, "tools/build.mjs"), "all-in-one", "--no-dashboard"], { stdio: "inherit" });
const KEY = `whc_${"L".repeat(40)}`;
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One request; resolves with its status and wait in ms. */
function one(url, method, sent, extraHeaders = {}) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = http.request(url, { method, agent, headers: { ...extraHeaders, ...(sent ? { ...headers, "content-length": Buffer.byteLength(sent) } : {}) } }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode, ms: Number(process.hrtime.bigint() - started) / 1e6 }));
    });
    req.on("error", reject);
    req.end(sent);
  });
}

/** `requests` requests one at a time to `pid`'s server: waits and CPU per request. */
async function measure(pid, url, method, sent, extraHeaders) {
  for (let i = 0; i < 30; i += 1) await one(url, method, sent, extraHeaders);
  const before = cpuSplit(pid);
  const waits = [];
  let failed = 0;
  for (let i = 0; i < requests; i += 1) {
    const { status, ms } = await one(url, method, sent, extraHeaders);
    waits.push(ms);
    if (status >= 300) failed += 1;
  }
  const after = cpuSplit(pid);
  waits.sort((a, b) => a - b);
  const at = (p) => waits[Math.min(waits.length - 1, Math.floor((waits.length * p) / 100))];
  return {
    p50: at(50),
    p99: at(99),
    cpuUs: ((after.total - before.total) / requests) * 1e6,
    mainUs: ((after.main - before.main) / requests) * 1e6,
    failed,
  };
}

const line = (name, r, bareUs) =>
  `${name.padEnd(44)} p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  CPU ${r.cpuUs.toFixed(0)} µs/request (main thread ${r.mainUs.toFixed(0)})` +
  `${bareUs ? `  ${(r.cpuUs / bareUs).toFixed(2)}x bare` : ""}  failed ${r.failed}`;

const barePort = await freePort();
const bare = await startScript(path.join(here, "tools/bench/ingest/bare-server.mjs"), [String(barePort)], {}, "bare ready");
const baseline = await measure(bare.pid, `http://127.0.0.1:${barePort}/`, "POST", body);
await stop(bare);
agent.destroy();
console.log(`${requests} requests one at a time, the benchmark's ${Buffer.byteLength(body)} B event; ${os.cpus().length} cores`);
console.log(line("bare node:http", baseline));

for (const checkout of checkouts) {
  const work = mkdtempSync(path.join(os.tmpdir(), "whc-bench-lone-"));
  // The key's request rate (50 a second by default) would refuse most of the reads.
  const { child, gateway, createEndpoint } = await startAllInOne(checkout, work, KEY, { WHC_QUOTA_API_RPS: "1000000" });
  try {
    const auth = { authorization: `Bearer ${KEY}` };
    const endpoint = await createEndpoint({ slug: "bench-lone" });
    const captures = await measure(child.pid, endpoint.webhookUrl, "POST", body);
    agent.destroy();
    const reads = await measure(child.pid, `${gateway}/v1/endpoints/${endpoint.id}`, "GET", undefined, auth);
    agent.destroy();
    console.log(line(`${checkout}: captures`, captures, baseline.cpuUs));
    console.log(line(`${checkout}: GET /v1/endpoints/{id}`, reads));
  } finally {
    await stop(child);
    rmSync(work, { recursive: true, force: true });
  }
}
