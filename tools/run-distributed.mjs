// `npm run start:distributed`: the five services as separate processes on this machine,
// talking Connect over HTTP/2 with a shared internal token, with NATS for notifications
// (WHC_NATS_URL, default the local nats-server) — the same processes docker-compose.yml runs,
// minus the containers. A service that dies is started again (with backoff); the others go on.
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { randomBytes, randomInt } from "node:crypto";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const env = { ...process.env };
// glibc's allocator: bodies of 128 KiB and more get memory of their own, given back when freed
// (docs/operations.md, "Memory"), as `npm start` and the image set it. Not the all-in-one's larger
// young generation: a catalog receiving its batches as buffers then ran a major collection for
// each scavenge (docs/performance.md, "The young generation, per process").
env.MALLOC_MMAP_THRESHOLD_ ??= "131072";
// V8's old generation starts with room for 128 MiB before its first major collection, as every
// launcher starts it (LAUNCH_NODE_ARGS in @whc/testing; docs/operations.md, "Memory").
const NODE_ARGS = ["--initial-old-space-size=128"];
env.WHC_NATS_URL ??= "nats://127.0.0.1:4222";
env.WHC_DATA_DIR ??= path.join(root, "data", "distributed");
// The data directory holds keys: 0700 when made here, its files 0600 (docs/operations.md, "Security model").
if (!existsSync(env.WHC_DATA_DIR)) {
  mkdirSync(env.WHC_DATA_DIR, { recursive: true, mode: 0o700 });
  chmodSync(env.WHC_DATA_DIR, 0o700);
}
// Every internal call carries it; made for this run unless given (the processes are all ours).
env.WHC_INTERNAL_TOKEN ||= randomBytes(32).toString("hex");

// A development key, generated once and kept beside the data, unless keys are configured.
if (!env.WHC_BOOTSTRAP_API_KEYS) {
  const file = path.join(env.WHC_DATA_DIR, "dev-api-key");
  if (!existsSync(file)) {
    const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let key = "whc_";
    for (let i = 0; i < 40; i += 1) key += alphabet[randomInt(62)];
    writeFileSync(file, `${key}\n`, { mode: 0o600 });
  }
  chmodSync(file, 0o600);
  const key = readFileSync(file, "utf8").trim();
  env.WHC_BOOTSTRAP_API_KEYS = `default:${key}`;
  process.stdout.write(`API key of account "default" (kept in ${file}):\n\n    ${key}\n\n`);
}

const services = ["catalog", "crypto", "replay", "ingest", "gateway"];
// One metrics port each on this one machine: WHC_METRICS_PORT (9464) for the first, then the
// next ones in the order above; 0 leaves them all without one.
const metricsBase = Number(env.WHC_METRICS_PORT ?? 9464);
const metricsPort = (name) => (metricsBase === 0 ? 0 : metricsBase + services.indexOf(name));

// A service that dies is started again after 1 s, doubling while it keeps dying soon after
// its start, up to 30 s; one that ran a minute before dying starts over at 1 s.
const FIRST_DELAY_MS = 1000;
const MAX_DELAY_MS = 30_000;
const STABLE_MS = 60_000;

const running = new Map();
const delays = new Map(services.map((name) => [name, FIRST_DELAY_MS]));
const timers = new Set();
let stopping = false;

const prefixOf = (name) => `${name.padEnd(8)}| `;

function start(name) {
  const prefix = prefixOf(name);
  const child = spawn(process.execPath, ["--enable-source-maps", ...NODE_ARGS, path.join(root, "dist", name, "main.js")], {
    env: { ...env, WHC_METRICS_PORT: String(metricsPort(name)) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const startedAt = Date.now();
  running.set(name, child);
  process.stdout.write(`${prefix}started (pid ${child.pid})\n`);
  for (const stream of [child.stdout, child.stderr]) {
    let rest = "";
    stream.on("data", (chunk) => {
      const lines = (rest + chunk.toString()).split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) process.stdout.write(prefix + line + "\n");
    });
  }
  child.on("exit", (code, signal) => {
    running.delete(name);
    if (stopping) {
      process.stdout.write(`${prefix}exited (${signal ?? code})\n`);
      if (running.size === 0) process.exit(exitCode);
      return;
    }
    if (Date.now() - startedAt >= STABLE_MS) delays.set(name, FIRST_DELAY_MS);
    const delay = delays.get(name);
    delays.set(name, Math.min(delay * 2, MAX_DELAY_MS));
    process.stdout.write(`${prefix}exited (${signal ?? code}); restarting ${name} in ${delay} ms\n`);
    const timer = setTimeout(() => {
      timers.delete(timer);
      start(name);
    }, delay);
    timers.add(timer);
  });
}

let exitCode = 0;
function stop(code) {
  if (stopping) return;
  stopping = true;
  exitCode = code;
  for (const timer of timers) clearTimeout(timer);
  if (running.size === 0) process.exit(code);
  for (const child of running.values()) child.kill("SIGTERM");
}

for (const name of services) start(name);
process.on("SIGINT", () => stop(0));
process.on("SIGTERM", () => stop(0));
