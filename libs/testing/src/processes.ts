import { spawn, type ChildProcess } from "node:child_process";

export interface RunningProcess {
  readonly child: ChildProcess;
  /** Everything it wrote so far, stdout and stderr interleaved. */
  output(): string;
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * What every way the project starts its processes sets (`npm start`, `npm run start:distributed`,
 * the image): glibc's allocator gives each allocation of 128 KiB or more (a large request body)
 * memory of its own and returns it when freed, instead of raising the threshold after the first
 * such free and carving later bodies from a heap it never gives back (docs/operations.md,
 * "Memory").
 */
export const LAUNCH_ENV: Readonly<Record<string, string>> = { MALLOC_MMAP_THRESHOLD_: "131072" };

/**
 * What the all-in-one process is started with besides (`npm start`, the image's default
 * command): V8's young generation may grow to 64 MiB a semi-space instead of 16. Each scavenge
 * copies the requests still in flight, and a smaller space scavenges more often. The five
 * services of the distributed mode are started without it: a catalog receiving its batches as
 * buffers then ran a major collection for each scavenge (docs/performance.md, "The young
 * generation, per process").
 */
export const ALL_IN_ONE_LAUNCH_ENV: Readonly<Record<string, string>> = { NODE_OPTIONS: "--max-semi-space-size=64" };

/**
 * What every way the project starts its processes passes to `node` before the script (`npm
 * start`, `npm run start:distributed`, the image's entry point, so docker-compose and Kubernetes
 * too): V8's old generation starts with room for 128 MiB before its first major collection. With
 * V8's own sizing a process under load started one every 0.2-0.4 s (incremental marking from a
 * task, the old generation's slack below the young one's size), although little survived: in
 * ingest its helper threads' marking cost 70-80 µs per capture. With this, a few in a run, ingest's
 * other threads 24-30 µs per capture, p99 34 instead of 54-76 ms, 15 MiB more resident
 * (docs/performance.md, "Major collections nobody needed"). NODE_OPTIONS does not take it.
 */
export const LAUNCH_NODE_ARGS: readonly string[] = Object.freeze(["--initial-old-space-size=128"]);

/** What a launcher starts `script` with: LAUNCH_ENV, and ALL_IN_ONE_LAUNCH_ENV for the all-in-one process. */
export function launchEnvOf(script: string): Readonly<Record<string, string>> {
  return /all-in-one[\\/]main\.js$/.test(script) ? { ...LAUNCH_ENV, ...ALL_IN_ONE_LAUNCH_ENV } : LAUNCH_ENV;
}

/**
 * Starts `node <script>` as the project's launchers start it (LAUNCH_NODE_ARGS, launchEnvOf), with the given
 * environment, and collects what it prints. Without a WHC_METRICS_PORT in `env` it gets none (0: no metrics
 * listener): test processes run side by side, and the default port would be one for all.
 */
export function startNode(script: string, env: Record<string, string>, args: string[] = []): RunningProcess {
  const child = spawn(process.execPath, ["--enable-source-maps", ...LAUNCH_NODE_ARGS, script, ...args], {
    env: { PATH: process.env.PATH ?? "", ...launchEnvOf(script), WHC_METRICS_PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let text = "";
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    text += chunk.toString();
    for (const l of listeners) l();
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  return {
    child,
    output: () => text,
    waitForOutput(pattern, timeoutMs = 45_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = text.match(pattern);
          if (m) {
            cleanup();
            resolve(m);
          }
        };
        const onExit = () => {
          cleanup();
          reject(new Error(`process exited before printing ${pattern}: ${text}`));
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out waiting for ${pattern}: ${text}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          listeners.delete(check);
          child.off("exit", onExit);
        };
        listeners.add(check);
        child.once("exit", onExit);
        check();
      });
    },
    stop(signal = "SIGTERM") {
      return new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
        child.once("exit", (code) => resolve(code));
        child.kill(signal);
      });
    },
  };
}
