// What the framing of the export's answer costs `whc events export` (ADR 0095): the built CLI
// reads LINES lines of about 2.5 KB from a local server that writes as fast as the socket takes
// them, so the CLI is the side that falls behind, as it does on a loaded machine. Framed one HTTP
// chunk per line (the gateway before ADR 0095), Node 20's fetch copies all its socket holds for
// every chunk it parses; framed in about 64 KiB chunks it reads at its own pace. Prints, for each
// framing, the MB written per wall second and the CLI's CPU seconds per MB (/proc), and the ratio.
// A run is cut after CAP seconds and reports how far it got.
//   node tools/bench/export/run.mjs [lines=100000] [cap seconds=60] [rounds=1]
// Needs the CLI built: `node tools/build.mjs whc` (`npm run build` builds it).
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, startScript, stop } from "../harness.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const [lines = 100_000, capSeconds = 60, rounds = 1] = process.argv.slice(2).map(Number);
const cli = path.join(root, "dist/whc/main.js");
const TICKS = 100; // clock ticks per second (USER_HZ)

/** utime + stime of a process, in seconds, or undefined once it is gone. */
function cpuOf(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return undefined;
  }
}

async function exportOnce(framing, dir) {
  const port = await freePort();
  const server = await startScript(path.join(root, "tools/bench/export/ndjson-server.mjs"), [], { FRAMING: framing, LINES: String(lines), PORT: String(port) }, "ready");
  const file = path.join(dir, `${framing}.ndjson`);
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, [cli, "events", "export", "bulk", "-o", file], {
    env: { ...process.env, WHC_API_URL: `http://127.0.0.1:${port}`, WHC_API_KEY: "whc_bench" },
    stdio: "ignore",
  });
  let cpu = 0;
  const poll = setInterval(() => (cpu = cpuOf(child.pid) ?? cpu), 20);
  const cap = setTimeout(() => child.kill("SIGKILL"), capSeconds * 1000);
  const code = await new Promise((resolve) => child.on("exit", (c) => resolve(c)));
  clearInterval(poll);
  clearTimeout(cap);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await stop(server);
  const mb = statSync(file).size / 1e6;
  return { framing, complete: code === 0, seconds, mb, cpu };
}

const dir = mkdtempSync(path.join(os.tmpdir(), "whc-bench-export-"));
try {
  for (let round = 1; round <= rounds; round++) {
    const results = [];
    for (const framing of round % 2 ? ["line", "64k"] : ["64k", "line"]) results.push(await exportOnce(framing, dir));
    for (const r of results) {
      const state = r.complete ? "complete" : `cut after ${capSeconds} s`;
      console.log(
        `round ${round} ${r.framing.padEnd(4)} ${r.mb.toFixed(0).padStart(4)} MB in ${r.seconds.toFixed(1).padStart(5)} s (${state}): ` +
          `${(r.mb / r.seconds).toFixed(1).padStart(6)} MB/s, CLI CPU ${((r.cpu / r.mb) * 1000).toFixed(1).padStart(6)} ms per MB`,
      );
    }
    const [line, big] = ["line", "64k"].map((f) => results.find((r) => r.framing === f));
    console.log(`round ${round} CLI CPU per MB, one chunk per line / 64 KiB chunks: ${(line.cpu / line.mb / (big.cpu / big.mb)).toFixed(1)}x`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
