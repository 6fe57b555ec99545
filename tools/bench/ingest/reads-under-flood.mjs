// An API read while captures flood in (ADR 0099): the all-in-one process of each checkout takes
// the benchmark's captures from `wrk -t2 -c50` while one client reads `GET /v1/endpoints/{id}`
// one request at a time; printed per checkout: how many reads it made and their wait (p50, p90,
// p99). What a dashboard's page waits for during a flood. Figures only, no assertion.
//
//   node tools/bench/ingest/reads-under-flood.mjs [seconds] [checkout ...]
//
// Each checkout holds a built `dist/all-in-one/main.js` (default: this one, built first).
import { execFileSync, spawn } from "node:child_process";
import http from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startAllInOne, stop, writeWrkScript } from "../harness.mjs";

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const seconds = Number(process.argv[2] ?? 8);
const checkouts = process.argv.length > 3 ? process.argv.slice(3).map((c) => path.resolve(c)) : [here];
if (process.argv.length <= 3) execFileSync(process.execPath, [path.join(here, "tools/build.mjs"), "all-in-one", "--no-dashboard"], { stdio: "inherit" });
const KEY = `whc_${"R".repeat(40)}`;

/** One read over `agent`; resolves with its wait in ms. */
function read(url, agent) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = http.request(url, { agent, headers: { authorization: `Bearer ${KEY}` } }, (res) => {
      res.resume();
      res.on("end", () => (res.statusCode === 200 ? resolve(Number(process.hrtime.bigint() - started) / 1e6) : reject(new Error(`read answered ${res.statusCode}`))));
    });
    req.on("error", reject);
    req.end();
  });
}

for (const checkout of checkouts) {
  const work = mkdtempSync(path.join(os.tmpdir(), "whc-bench-reads-"));
  // The key's request rate (50 a second by default) would refuse most of the reads.
  const { child, gateway, createEndpoint } = await startAllInOne(checkout, work, KEY, { WHC_QUOTA_API_RPS: "1000000" });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const endpoint = await createEndpoint({ slug: "bench-reads" });
    // The flood starts 2 s before the reads and ends after them.
    const wrk = spawn("wrk", ["-t2", "-c50", `-d${seconds + 4}s`, "-s", writeWrkScript(work), endpoint.webhookUrl], { stdio: "ignore" });
    const flooded = new Promise((resolve) => wrk.on("exit", resolve));
    await new Promise((r) => setTimeout(r, 2000));
    const url = `${gateway}/v1/endpoints/${endpoint.id}`;
    const waits = [];
    for (const end = Date.now() + seconds * 1000; Date.now() < end; ) waits.push(await read(url, agent));
    await flooded;
    waits.sort((a, b) => a - b);
    const at = (p) => waits[Math.min(waits.length - 1, Math.floor((waits.length * p) / 100))].toFixed(2);
    console.log(`${checkout}: ${waits.length} reads of GET /v1/endpoints/{id} during wrk -t2 -c50 on captures: p50 ${at(50)} ms, p90 ${at(90)} ms, p99 ${at(99)} ms`);
  } finally {
    agent.destroy();
    await stop(child);
    rmSync(work, { recursive: true, force: true });
  }
}
