// Relay benchmark (issue 17): the all-in-one process with a relay endpoint forwarding to a
// local destination, driven at 50 connections. Prints captures/s, the time from capture to
// delivery (p50/p99: the destination's arrival time minus the event's receivedAt, one clock),
// and the outbox at the end (pending deliveries once the load stops and the outbox drains).
// Figures only, no assertion.
//
//   node tools/bench/forward/run.mjs [seconds] [connections]
//
// BENCH_TLS=1 makes the destination https (a self-signed certificate for 127.0.0.1 made with the
// machine's openssl, which the all-in-one trusts through NODE_EXTRA_CA_CERTS): what a TLS
// handshake per delivery costs shows there. The destination's connections are counted either way.
import { spawn, execFileSync } from "node:child_process";
import http from "node:http";
import https from "node:https";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { ALL_IN_ONE_LAUNCH_ENV, allInOneEnv, cpuSplit, destinationCertificate, freePort, LAUNCH_ENV } from "../harness.mjs";
import { body, headers } from "../ingest/payload.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const duration = Number(process.argv[2] ?? 10);
const connections = Number(process.argv[3] ?? 50);
const KEY = `whc_${"F".repeat(40)}`;


// The destination: answers 200 at once and notes when each delivery (by event id) arrived.
const arrivals = new Map();
let duplicates = 0;
const work = mkdtempSync(path.join(os.tmpdir(), "whc-bench-forward-"));
const tls = process.env.BENCH_TLS === "1";
const certificate = tls ? destinationCertificate(work) : undefined;
const dest = (certificate ? (handler) => https.createServer(certificate, handler) : http.createServer)((req, res) => {
  req.resume();
  req.on("end", () => {
    const id = String(req.headers["x-whc-delivery-id"]);
    if (arrivals.has(id)) duplicates += 1;
    else arrivals.set(id, Date.now());
    res.end("ok");
  });
});
let destConnections = 0;
dest.on(tls ? "secureConnection" : "connection", () => (destConnections += 1));
await new Promise((r) => dest.listen(0, "127.0.0.1", r));
const destUrl = `${tls ? "https" : "http"}://127.0.0.1:${dest.address().port}/hooks`;

execFileSync(process.execPath, [path.join(root, "tools/build.mjs"), "all-in-one", "--no-dashboard"], { stdio: "inherit" });
const [gw, ing] = [await freePort(), await freePort()];
// BENCH_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") go to the all-in-one process.
const nodeArgs = process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(" ") : [];
const child = spawn(process.execPath, [...nodeArgs, path.join(root, "dist/all-in-one/main.js")], {
  env: {
    ...LAUNCH_ENV,
    ...ALL_IN_ONE_LAUNCH_ENV,
    ...process.env,
    ...allInOneEnv(work, gw, ing, KEY),
    // One key reads the whole run back: the per-key rate (ADR 0035) is not what this measures.
    WHC_QUOTA_API_RPS: "1000000",
    WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true",
    WHC_EGRESS_SLOTS_PER_ORIGIN: "64",
    ...(certificate ? { NODE_EXTRA_CA_CERTS: certificate.path } : {}),
  },
  stdio: ["ignore", "pipe", "pipe"],
});
await new Promise((resolve, reject) => {
  let out = "";
  const onData = (c) => {
    out += c;
    if (out.includes("webhook-capture ready")) resolve();
  };
  child.stdout.on("data", onData);
  child.stderr.on("data", onData);
  child.on("exit", (code) => reject(new Error(`all-in-one exited ${code}: ${out}`)));
});

const api = `http://127.0.0.1:${gw}`;
const auth = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
const endpoint = await (
  await fetch(`${api}/v1/endpoints`, {
    method: "POST",
    headers: auth,
    body: JSON.stringify({ slug: "bench-relay", operatingMode: "relay", forward: { url: destUrl } }),
  })
).json();
if (!endpoint.webhookUrl) throw new Error(`endpoint not created: ${JSON.stringify(endpoint)}`);

console.error(`relay endpoint ${endpoint.id} -> ${destUrl}; load for ${duration} s`);
const started = Date.now();
const cpuBefore = cpuSplit(child.pid);
const result = await new Promise((resolve, reject) => {
  autocannon({ url: endpoint.webhookUrl, method: "POST", connections, duration, headers, body }, (err, r) => (err ? reject(err) : resolve(r)));
});
const loadEnded = Date.now();

// The process's CPU from the load's start until every acknowledged capture was delivered and
// nothing more arrived for half a second (bounded): what a capture and its delivery cost together.
const acknowledged = result.requests.total;
const quietDeadline = Date.now() + 60_000;
for (let last = -1; (arrivals.size < acknowledged || arrivals.size !== last) && Date.now() < quietDeadline; ) {
  last = arrivals.size;
  await new Promise((r) => setTimeout(r, 500));
}
const cpuAfter = cpuSplit(child.pid);
const relayed = arrivals.size;

console.error(`load done: ${result.requests.total} requests; reading the stored events`);
// Every acknowledged capture's receivedAt, from the API.
const receivedAt = new Map();
let before = "";
for (;;) {
  const page = await (await fetch(`${api}/v1/endpoints/${endpoint.id}/events?limit=200${before}`, { headers: auth })).json();
  for (const item of page.items) receivedAt.set(item.id, Date.parse(item.receivedAt));
  if (!page.nextBefore) break;
  before = `&before=${encodeURIComponent(page.nextBefore)}&beforeId=${page.nextBeforeId}`;
}
// Let the outbox drain (bounded), then read what is still pending.
const drainDeadline = Date.now() + 60_000;
while (arrivals.size < receivedAt.size && Date.now() < drainDeadline) await new Promise((r) => setTimeout(r, 200));
const drained = Date.now();
const pending = await (await fetch(`${api}/v1/endpoints/${endpoint.id}/events?forwardState=pending&limit=200`, { headers: auth })).json();

const latencies = [...receivedAt].filter(([id]) => arrivals.has(id)).map(([id, at]) => arrivals.get(id) - at).sort((a, b) => a - b);
const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? NaN;
console.log(`\nrelay${tls ? " to an https destination" : ""}, ${duration} s at ${connections} connections, ${Buffer.byteLength(body)} B bodies; ${os.cpus().length} cores\n`);
console.log(`captures        ${result.requests.total} (${Math.round(result.requests.average)}/s), non-2xx ${result.non2xx}, errors ${result.errors}`);
console.log(`stored          ${receivedAt.size}; delivered ${arrivals.size}; duplicate deliveries ${duplicates}; connections opened to the destination ${destConnections}`);
console.log(`capture->delivery  p50 ${pct(50)} ms   p99 ${pct(99)} ms   max ${latencies.at(-1)} ms`);
console.log(
  `CPU per capture delivered  ${Math.round(((cpuAfter.total - cpuBefore.total) * 1e6) / relayed)} µs (main thread ${Math.round(((cpuAfter.main - cpuBefore.main) * 1e6) / relayed)} µs; ${relayed} delivered, the load and the outbox's drain)`,
);
console.log(`outbox drained  ${((drained - loadEnded) / 1000).toFixed(1)} s after the load ended (load ${((loadEnded - started) / 1000).toFixed(1)} s)`);
console.log(`outbox at the end: ${pending.items.length} pending`);

child.kill("SIGTERM");
await new Promise((r) => child.once("exit", r));
dest.close();
rmSync(work, { recursive: true, force: true });
