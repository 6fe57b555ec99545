// Soak: N minutes (default 10) of mixed load on the all-in-one process: captures, lists,
// details, searches and replays to a local target. Prints throughput per kind, the error
// count (expected 0) and the server's RSS at minute 1 and at the end. Figures only.
//   node tools/bench/soak/run.mjs [minutes]
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ALL_IN_ONE_LAUNCH_ENV, allInOneEnv, freePort, LAUNCH_ENV } from "../harness.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const minutes = Number(process.argv[2] ?? 10);
const KEY = `whc_${"S".repeat(40)}`;
const rssMb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]) / 1024;

execFileSync(process.execPath, [path.join(root, "tools/build.mjs"), "all-in-one"], { stdio: "inherit" });
const dataDir = mkdtempSync(path.join(os.tmpdir(), "whc-soak-"));
const [gw, ing] = [await freePort(), await freePort()];
const server = spawn(process.execPath, [path.join(root, "dist/all-in-one/main.js")], {
  env: {
    ...LAUNCH_ENV,
    ...ALL_IN_ONE_LAUNCH_ENV,
    ...process.env,
    ...allInOneEnv(dataDir, gw, ing, KEY),
    // One key makes every call of the soak: the per-key rate (ADR 0035) is not what this measures.
    WHC_QUOTA_API_RPS: "1000000",
    WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true",
    WHC_REPLAY_DAILY_LIMIT: "100000000",
    WHC_LOG_LEVEL: "error",
  },
  stdio: ["ignore", "ignore", "inherit"],
});
const api = `http://127.0.0.1:${gw}/v1`;
const auth = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
for (let i = 0; i < 100; i += 1) {
  try {
    if ((await fetch(`http://127.0.0.1:${gw}/healthz`)).ok) break;
  } catch {
    // not up yet
  }
  await new Promise((r) => setTimeout(r, 100));
}

const target = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => res.end("ok"));
});
await new Promise((r) => target.listen(0, "127.0.0.1", r));
const targetUrl = `http://127.0.0.1:${target.address().port}/hook`;

const endpoints = [];
for (let i = 0; i < 5; i += 1) {
  endpoints.push(await (await fetch(`${api}/endpoints`, { method: "POST", headers: auth, body: JSON.stringify({ slug: `soak-${i}` }) })).json());
}
const words = ["invoice", "payment", "refund", "customer", "shipment", "order", "alpha", "beta"];
const counts = { capture: 0, list: 0, detail: 0, search: 0, replay: 0 };
let errors = 0;
const lastIds = new Map();
const deadline = Date.now() + minutes * 60_000;
const pick = (a) => a[Math.floor(Math.random() * a.length)];

/** Nothing to do yet (no capture on that endpoint): wait a little, count nothing. */
const idle = () => new Promise((r) => setTimeout(() => r(null), 50));

async function loop(kind, work) {
  while (Date.now() < deadline) {
    try {
      const ok = await work();
      if (ok === null) continue;
      if (ok) counts[kind] += 1;
      else errors += 1;
    } catch {
      errors += 1;
    }
  }
}

const capture = async () => {
  const ep = pick(endpoints);
  const res = await fetch(ep.webhookUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ type: `${pick(words)}.created`, note: `${pick(words)} ${pick(words)} ${Math.random()}`, pad: "x".repeat(1200) }),
  });
  const body = await res.json();
  if (res.ok) lastIds.set(ep.id, body.id);
  return res.ok;
};
const list = async () => {
  const res = await fetch(`${api}/endpoints/${pick(endpoints).id}/events?limit=50`, { headers: auth });
  await res.arrayBuffer();
  return res.ok;
};
const detail = async () => {
  const ep = pick(endpoints);
  const id = lastIds.get(ep.id);
  if (!id) return idle();
  const res = await fetch(`${api}/endpoints/${ep.id}/events/${id}`, { headers: auth });
  await res.arrayBuffer();
  return res.ok;
};
const search = async () => {
  const res = await fetch(`${api}/endpoints/${pick(endpoints).id}/events?search=${pick(words)}+${pick(words)}&limit=20`, { headers: auth });
  await res.arrayBuffer();
  return res.ok;
};
const replay = async () => {
  const ep = pick(endpoints);
  const id = lastIds.get(ep.id);
  if (!id) return idle();
  const res = await fetch(`${api}/endpoints/${ep.id}/events/${id}/replay`, { method: "POST", headers: auth, body: JSON.stringify({ target_url: targetUrl }) });
  const body = await res.json();
  return res.ok && body.result === "delivered";
};

let rssAt1 = 0;
const sampler = setInterval(() => {
  const elapsed = minutes * 60_000 - (deadline - Date.now());
  if (!rssAt1 && elapsed >= 60_000) rssAt1 = rssMb(server.pid);
}, 1000);
const started = Date.now();
console.log(`soaking for ${minutes} min: 16 capture, 2 list, 2 detail, 2 search, 1 replay loops`);
await Promise.all([
  ...Array.from({ length: 16 }, () => loop("capture", capture)),
  ...Array.from({ length: 2 }, () => loop("list", list)),
  ...Array.from({ length: 2 }, () => loop("detail", detail)),
  ...Array.from({ length: 2 }, () => loop("search", search)),
  loop("replay", replay),
]);
clearInterval(sampler);
const rssEnd = rssMb(server.pid);
const seconds = (Date.now() - started) / 1000;
for (const [kind, n] of Object.entries(counts)) console.log(`${kind.padEnd(8)} ${n} (${(n / seconds).toFixed(1)}/s)`);
console.log(`errors   ${errors}`);
console.log(`RSS      minute 1: ${rssAt1.toFixed(0)} MiB, end: ${rssEnd.toFixed(0)} MiB (growth ${rssAt1 ? (((rssEnd - rssAt1) / rssAt1) * 100).toFixed(1) : "?"} %)`);
server.kill("SIGTERM");
target.close();
await new Promise((r) => server.on("exit", r));
rmSync(dataDir, { recursive: true, force: true });
