// `npm run start:distributed`: the five services as separate processes on this machine,
// talking Connect over h2c, with NATS for notifications (WHC_NATS_URL, default the local
// nats-server) — the same processes docker-compose.yml runs, minus the containers.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { randomInt } from "node:crypto";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const env = { ...process.env };
// glibc's allocator: bodies of 128 KiB and more get memory of their own, given back when freed
// (docs/operations.md, "Memory"); as `npm start` and the image set it.
env.MALLOC_MMAP_THRESHOLD_ ??= "131072";
env.WHC_NATS_URL ??= "nats://127.0.0.1:4222";
env.WHC_DATA_DIR ??= path.join(root, "data", "distributed");
mkdirSync(env.WHC_DATA_DIR, { recursive: true });

// A development key, generated once and kept beside the data, unless keys are configured.
if (!env.WHC_BOOTSTRAP_API_KEYS) {
  const file = path.join(env.WHC_DATA_DIR, "dev-api-key");
  if (!existsSync(file)) {
    const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let key = "whc_";
    for (let i = 0; i < 40; i += 1) key += alphabet[randomInt(62)];
    writeFileSync(file, `${key}\n`, { mode: 0o600 });
  }
  const key = readFileSync(file, "utf8").trim();
  env.WHC_BOOTSTRAP_API_KEYS = `default:${key}`;
  process.stdout.write(`API key of account "default" (kept in ${file}):\n\n    ${key}\n\n`);
}

const services = ["catalog", "crypto", "replay", "ingest", "gateway"];
const children = services.map((name) => {
  const child = spawn(process.execPath, ["--enable-source-maps", path.join(root, "dist", name, "main.js")], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const prefix = `${name.padEnd(8)}| `;
  for (const stream of [child.stdout, child.stderr]) {
    let rest = "";
    stream.on("data", (chunk) => {
      const lines = (rest + chunk.toString()).split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) process.stdout.write(prefix + line + "\n");
    });
  }
  child.on("exit", (code, signal) => {
    process.stdout.write(`${prefix}exited (${signal ?? code})\n`);
    if (!stopping) stop(1);
  });
  return child;
});

let stopping = false;
function stop(code) {
  if (stopping) return;
  stopping = true;
  for (const child of children) if (child.exitCode === null) child.kill("SIGTERM");
  const wait = setInterval(() => {
    if (children.every((c) => c.exitCode !== null || c.signalCode !== null)) {
      clearInterval(wait);
      process.exit(code);
    }
  }, 100);
}
process.on("SIGINT", () => stop(0));
process.on("SIGTERM", () => stop(0));
