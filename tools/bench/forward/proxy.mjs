// Proxy latency (design §11, ADR 0096): what a sender waits for when an endpoint proxies. The
// all-in-one process of each checkout given, with a proxy endpoint to a local destination that
// answers at once, gets sequential requests (one at a time, after 30 unmeasured) from one
// kept-alive connection; printed per checkout: p50/p90/p99 of the sender's wait and how many
// connections the destination saw. Figures only, no assertion.
//
//   node tools/bench/forward/proxy.mjs [requests] [checkout ...]
//
// Each checkout holds a built `dist/all-in-one/main.js` (default: this one, built first).
// BENCH_TLS=1 makes the destination https, as in run.mjs: a self-signed certificate for
// 127.0.0.1 made with the machine's openssl, trusted through NODE_EXTRA_CA_CERTS.
import { execFileSync } from "node:child_process";
import http from "node:http";
import https from "node:https";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { destinationCertificate, startAllInOne, stop } from "../harness.mjs";
import { body, headers } from "../ingest/payload.mjs";

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const requests = Number(process.argv[2] ?? 400);
const checkouts = process.argv.length > 3 ? process.argv.slice(3).map((c) => path.resolve(c)) : [here];
if (process.argv.length <= 3) execFileSync(process.execPath, [path.join(here, "tools/build.mjs"), "all-in-one", "--no-dashboard"], { stdio: "inherit" });
const tls = process.env.BENCH_TLS === "1";
const KEY = `whc_${"P".repeat(40)}`;

async function measure(checkout) {
  const work = mkdtempSync(path.join(os.tmpdir(), "whc-bench-proxy-"));
  const certificate = tls ? destinationCertificate(work) : undefined;
  const answer = (req, res) => {
    req.resume();
    req.on("end", () => res.end('{"ok":true}'));
  };
  const dest = certificate ? https.createServer(certificate, answer) : http.createServer(answer);
  let connections = 0;
  dest.on(tls ? "secureConnection" : "connection", () => (connections += 1));
  await new Promise((r) => dest.listen(0, "127.0.0.1", r));
  const { child, createEndpoint } = await startAllInOne(checkout, work, KEY, {
    WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true",
    ...(certificate ? { NODE_EXTRA_CA_CERTS: certificate.path } : {}),
  });
  const agent = new http.Agent({ keepAlive: true });
  try {
    const target = `${tls ? "https" : "http"}://127.0.0.1:${dest.address().port}/hooks`;
    const endpoint = await createEndpoint({ slug: "bench-proxy", operatingMode: "proxy", forward: { url: target } });
    const url = new URL(endpoint.webhookUrl);
    const one = () =>
      new Promise((resolve, reject) => {
        const started = process.hrtime.bigint();
        const req = http.request(
          { host: url.hostname, port: url.port, path: url.pathname, method: "POST", headers: { ...headers, "content-length": Buffer.byteLength(body) }, agent },
          (res) => {
            res.resume();
            res.on("end", () => resolve({ status: res.statusCode, ms: Number(process.hrtime.bigint() - started) / 1e6 }));
          },
        );
        req.on("error", reject);
        req.end(body);
      });
    for (let i = 0; i < 30; i += 1) await one();
    connections = 0;
    const waits = [];
    let other = 0;
    for (let i = 0; i < requests; i += 1) {
      const { status, ms } = await one();
      waits.push(ms);
      if (status !== 200) other += 1;
    }
    waits.sort((a, b) => a - b);
    const at = (p) => waits[Math.min(waits.length - 1, Math.floor((waits.length * p) / 100))].toFixed(2);
    console.log(
      `${checkout}: ${requests} proxied one at a time to ${tls ? "https" : "http"}: p50 ${at(50)} ms, p90 ${at(90)} ms, p99 ${at(99)} ms; ` +
        `not 200: ${other}; connections the destination saw: ${connections}`,
    );
  } finally {
    agent.destroy();
    await stop(child);
    dest.close();
    rmSync(work, { recursive: true, force: true });
  }
}

for (const checkout of checkouts) await measure(checkout);
