// Ingest benchmark: 1.5 KB JSON POSTs with ~12 headers at 50 connections for 10 s against
// the all-in-one process (npm start's), then against a bare node:http server that answers
// 200, in the same run. Prints captures/s, p50/p99 latency and the ratio. Figures only.
//   node tools/bench/ingest/run.mjs [seconds] [connections]
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import net from "node:net";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const duration = Number(process.argv[2] ?? 10);
const connections = Number(process.argv[3] ?? 50);
const KEY = `whc_${"B".repeat(40)}`;

const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

function start(script, args, env, ready) {
  const child = spawn(process.execPath, [...(process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(" ") : []), script, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  return new Promise((resolve, reject) => {
    let out = "";
    const onData = (c) => {
      out += c;
      if (out.includes(ready)) resolve(child);
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    if (process.env.BENCH_ECHO) child.stderr.on("data", (c) => process.stderr.write(c));
    child.on("exit", (code) => reject(new Error(`${script} exited ${code}: ${out}`)));
  });
}

const body = JSON.stringify({
  id: "evt_1NG8Du2eZvKYlo2CuKKVtHwe",
  object: "event",
  type: "invoice.payment_succeeded",
  created: 1700000000,
  data: {
    object: {
      id: "in_1NG8Du2eZvKYlo2C",
      amount_due: 2000,
      amount_paid: 2000,
      currency: "usd",
      customer: "cus_NffrFeUfNV2Hib",
      lines: Array.from({ length: 8 }, (_, i) => ({ id: `il_${i}`, amount: 250, description: `Line item number ${i} of the invoice` })),
      status: "paid",
    },
  },
}).padEnd(1536, " ");
const headers = {
  "content-type": "application/json",
  "user-agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
  accept: "*/*; q=0.5, application/xml",
  "cache-control": "no-cache",
  "stripe-signature": "t=1700000000,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd",
  "x-request-id": "req_9f8a7b6c5d4e3f2a",
  "x-forwarded-proto": "https",
  "x-amzn-trace-id": "Root=1-65a1b2c3-abcdef0123456789abcdef01",
  "accept-encoding": "gzip",
  "x-custom-tenant": "acme-corp",
  "x-retry-count": "0",
};

function load(url) {
  return new Promise((resolve, reject) => {
    autocannon({ url, method: "POST", connections, duration, headers, body }, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

function summary(name, r) {
  const non2xx = r.non2xx + r.errors;
  console.log(
    `${name.padEnd(22)} ${Math.round(r.requests.average).toString().padStart(6)} req/s   p50 ${r.latency.p50} ms   p99 ${r.latency.p99} ms   non-2xx/errors ${non2xx}`,
  );
}

execFileSync(process.execPath, [path.join(root, "tools/build.mjs"), "all-in-one"], { stdio: "inherit" });
const dataDir = mkdtempSync(path.join(os.tmpdir(), "whc-bench-ingest-"));
const [gw, ing, bare] = [await freePort(), await freePort(), await freePort()];
const aio = await start(
  path.join(root, "dist/all-in-one/main.js"),
  [],
  {
    WHC_DATA_DIR: dataDir,
    WHC_HOST: "127.0.0.1",
    WHC_GATEWAY_PORT: String(gw),
    WHC_INGEST_PORT: String(ing),
    WHC_INGEST_PUBLIC_URL: `http://127.0.0.1:${ing}`,
    WHC_BOOTSTRAP_API_KEYS: `bench:${KEY}`,
    WHC_LOG_LEVEL: "info",
  },
  "webhook-capture ready",
);
const endpoint = await (
  await fetch(`http://127.0.0.1:${gw}/v1/endpoints`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ slug: "bench" }),
  })
).json();

console.log(`${duration} s at ${connections} connections, ${Buffer.byteLength(body)} B bodies, ${Object.keys(headers).length + 2} headers; ${os.cpus().length} cores\n`);
await load(endpoint.webhookUrl); // warm-up pass, not reported
const capture = await load(endpoint.webhookUrl);
summary("all-in-one ingest", capture);
const stored = await (
  await fetch(`http://127.0.0.1:${gw}/v1/endpoints/${endpoint.id}`, { headers: { authorization: `Bearer ${KEY}` } })
).json();
aio.kill("SIGTERM");

const bareServer = await start(path.join(root, "tools/bench/ingest/bare-server.mjs"), [String(bare)], {}, "bare ready");
const baseline = await load(`http://127.0.0.1:${bare}/`);
summary("bare node:http", baseline);
bareServer.kill("SIGTERM");

console.log(
  `\nratio ${(capture.requests.average / baseline.requests.average * 100).toFixed(1)} % of the bare server; ` +
    `${stored.eventCount} events stored (warm-up included) vs ${capture.requests.total} acknowledged in the measured pass`,
);
rmSync(dataDir, { recursive: true, force: true });
