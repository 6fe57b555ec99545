// What the benchmarks share: free ports, starting and stopping the programs they measure, the
// CPU a process used (from /proc), and wrk's request script and summary line.
import { execFileSync, spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { body, headers } from "./ingest/payload.mjs";

export const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/** What the project's launchers start its processes with (LAUNCH_ENV in @whc/testing). */
export const LAUNCH_ENV = { MALLOC_MMAP_THRESHOLD_: "131072" };

/** What they start the all-in-one process with besides (ALL_IN_ONE_LAUNCH_ENV in @whc/testing). */
export const ALL_IN_ONE_LAUNCH_ENV = { NODE_OPTIONS: "--max-semi-space-size=64" };

/**
 * Starts a program with the launchers' environment (LAUNCH_ENV, and ALL_IN_ONE_LAUNCH_ENV for the
 * all-in-one process) and resolves with its child process once it printed `ready`; rejects when
 * it exits first. BENCH_ECHO=1 copies its stderr here.
 */
export function startProgram(command, args, env, ready) {
  const launch = /all-in-one[\\/]main\.js$/.test(args.at(-1) ?? "") ? { ...LAUNCH_ENV, ...ALL_IN_ONE_LAUNCH_ENV } : LAUNCH_ENV;
  const child = spawn(command, args, { env: { ...launch, ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  return new Promise((resolve, reject) => {
    let out = "";
    const onData = (c) => {
      out += c;
      if (out.includes(ready)) resolve(child);
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    if (process.env.BENCH_ECHO) child.stderr.on("data", (c) => process.stderr.write(c));
    child.on("exit", (code) => reject(new Error(`${args.at(-1) ?? command} exited ${code}: ${out}`)));
  });
}

/** What the launchers pass to `node` before a process's script (LAUNCH_NODE_ARGS in @whc/testing). */
export const LAUNCH_NODE_ARGS = ["--initial-old-space-size=128"];

/**
 * A Node script, with BENCH_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") before it; a
 * built process (`dist/<app>/main.js`) with LAUNCH_NODE_ARGS first, as the launchers start it.
 */
export function startScript(script, args, env, ready) {
  const launched = /[\\/]dist[\\/][^\\/]+[\\/]main\.js$/.test(script) ? LAUNCH_NODE_ARGS : [];
  const nodeArgs = process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(" ") : [];
  return startProgram(process.execPath, [...launched, ...nodeArgs, script, ...args], env, ready);
}

export function stop(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

/**
 * CPU seconds used so far by a process (Linux /proc; else NaN): `total` (user + system, all
 * threads), `main` (its main thread: the event loop), `system` (in the kernel, all threads);
 * and `faults`, its minor page faults (memory it touched for the first time: a large buffer
 * glibc maps afresh for each allocation costs one per 4 KiB).
 */
export function cpuSplit(pid) {
  try {
    const tick = 100;
    const faults = Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ")[7]);
    const split = { total: 0, main: 0, system: 0, faults };
    for (const t of readdirSync(`/proc/${pid}/task`)) {
      const fields = readFileSync(`/proc/${pid}/task/${t}/stat`, "utf8").split(") ")[1].split(" ");
      const user = Number(fields[11]) / tick;
      const system = Number(fields[12]) / tick;
      split.total += user + system;
      split.system += system;
      if (t === String(pid)) split.main += user + system;
    }
    return split;
  } catch {
    return { total: Number.NaN, main: Number.NaN, system: Number.NaN, faults: Number.NaN };
  }
}

const luaString = (s) => `"${[...Buffer.from(s)].map((b) => `\\${b}`).join("")}"`;

/** The ids of payload.mjs's event, which BENCH_FRESH_IDS=1 makes new for every request. */
const EVENT_IDS = ["1NG8Du2eZvKYlo2CuKKVtHwe", "1NG8Du2eZvKYlo2C", "NffrFeUfNV2Hib"];

/**
 * Lua that gives every request of a wrk thread new ids of the same lengths (hex of a per-thread
 * random start and a counter), as a provider's events each carry their own: the blind index
 * then meets words it has not remembered, where the same body every time has none.
 */
function freshIdsLua() {
  const template = EVENT_IDS.reduce((text, id, i) => text.replace(id, `@${i}${"_".repeat(id.length - 2)}`), body);
  if (EVENT_IDS.some((id, i) => !template.includes(`@${i}`))) throw new Error("payload.mjs's ids changed: update EVENT_IDS");
  return [
    `local template = ${luaString(template)}`,
    `local counter = 0`,
    `local start = 0`,
    // Seeded by the time and this thread's own table address: each thread, each run its own ids.
    `init = function(args) math.randomseed(os.time() + tonumber(tostring({}):match("(%x+)$"), 16) % 1000003); start = math.random(0, 2 ^ 24) end`,
    `request = function()`,
    `  counter = counter + 1`,
    `  local hex = string.format("%06x%018x", start, counter)`,
    // Each id: this thread's start, then as much of the counter as its length leaves room for.
    ...EVENT_IDS.map((id, i) => `  local id${i} = string.sub(hex, 1, 6) .. string.sub(hex, -${id.length - 6})`),
    `  local text = template${EVENT_IDS.map((id, i) => `:gsub("@${i}${"_".repeat(id.length - 2)}", id${i})`).join("")}`,
    `  return wrk.format(nil, nil, nil, text)`,
    `end`,
  ];
}

/**
 * Writes wrk's script for the benchmark's request (payload.mjs) into `dir`; answers its path.
 * `freshIds` (by default BENCH_FRESH_IDS=1): new ids in every request's body (freshIdsLua).
 * BENCH_SIGN_SECRET=<secret> signs the body as Stripe does, now, with that secret (its
 * `Stripe-Signature` replaces the payload's, made with no known secret and long expired): an
 * endpoint `{"provider": "stripe", "secret": <secret>}` then verifies every capture for the
 * next five minutes, Stripe's tolerance (not with fresh ids, whose bodies are not the one signed).
 */
export function writeWrkScript(dir, freshIds = process.env.BENCH_FRESH_IDS === "1") {
  const script = path.join(dir, freshIds ? "post-fresh.lua" : "post.lua");
  const secret = process.env.BENCH_SIGN_SECRET;
  const t = Math.floor(Date.now() / 1000);
  const signed = secret ? { "stripe-signature": `t=${t},v1=${createHmac("sha256", secret).update(`${t}.${body}`).digest("hex")}` } : {};
  writeFileSync(
    script,
    [
      `wrk.method = "POST"`,
      `wrk.body = ${luaString(body)}`,
      ...Object.entries({ ...headers, ...signed }).map(([k, v]) => `wrk.headers[${luaString(k)}] = ${luaString(v)}`),
      ...(freshIds ? freshIdsLua() : []),
      `done = function(summary, latency, requests)`,
      `  io.write(string.format("BENCH %d %d %d %d %f %f\\n", summary.requests, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout, summary.errors.status, summary.duration, latency:percentile(50) / 1000, latency:percentile(99) / 1000))`,
      `end`,
    ].join("\n"),
  );
  return script;
}

/**
 * The summary line the script makes wrk print: requests, failed (socket errors and answers of
 * 400 and above: a capture never answers 3xx), seconds, p50 and p99 (ms).
 */
export function wrkSummary(out) {
  const line = out.split("\n").find((l) => l.startsWith("BENCH "));
  if (!line) throw new Error(`wrk printed no summary:\n${out}`);
  const [requests, errors, bad, micros, p50, p99] = line.split(" ").slice(1).map(Number);
  return { total: requests, failed: errors + bad, seconds: micros / 1e6, p50, p99 };
}

/**
 * The environment the ingest benchmarks start the all-in-one process with: its data in
 * `dataDir`, its gateway and ingest on loopback at the given ports, `key` a bootstrap API key.
 */
export function allInOneEnv(dataDir, gatewayPort, ingestPort, key) {
  return {
    WHC_DATA_DIR: dataDir,
    WHC_HOST: "127.0.0.1",
    WHC_GATEWAY_PORT: String(gatewayPort),
    WHC_INGEST_PORT: String(ingestPort),
    WHC_INGEST_PUBLIC_URL: `http://127.0.0.1:${ingestPort}`,
    WHC_BOOTSTRAP_API_KEYS: `bench:${key}`,
    WHC_LOG_LEVEL: "info",
  };
}

/**
 * A self-signed certificate for 127.0.0.1, made in `dir` with the machine's openssl, for a
 * benchmark's https destination: `path` is the certificate's file (what NODE_EXTRA_CA_CERTS
 * names for the process that must trust it), `key` and `cert` what https.createServer takes.
 */
export function destinationCertificate(dir) {
  const certificate = path.join(dir, "destination.crt");
  const key = path.join(dir, "destination.key");
  execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
    "-subj", "/CN=bench destination", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", certificate], { stdio: "ignore" });
  return { path: certificate, key: readFileSync(key), cert: readFileSync(certificate) };
}

/**
 * The all-in-one process of `checkout` (its built `dist/all-in-one/main.js`), its data in
 * `dataDir`, `key` a bootstrap API key, `env` besides. Answers the child, the gateway's URL and
 * `createEndpoint(fields)`: the endpoint as `POST /v1/endpoints` answers it.
 */
export async function startAllInOne(checkout, dataDir, key, env = {}) {
  const [gw, ing] = [await freePort(), await freePort()];
  const child = await startScript(path.join(checkout, "dist/all-in-one/main.js"), [], { ...allInOneEnv(dataDir, gw, ing, key), ...env }, "webhook-capture ready");
  const gateway = `http://127.0.0.1:${gw}`;
  const createEndpoint = async (fields) => {
    const res = await fetch(`${gateway}/v1/endpoints`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(fields),
    });
    const endpoint = await res.json();
    if (!endpoint.webhookUrl) throw new Error(`endpoint not created: ${JSON.stringify(endpoint)}`);
    return endpoint;
  };
  return { child, gateway, createEndpoint };
}
