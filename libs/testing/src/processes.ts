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
 * such free and carving later bodies from a heap it never gives back (docs/operations.md, "Memory").
 */
export const LAUNCH_ENV: Readonly<Record<string, string>> = { MALLOC_MMAP_THRESHOLD_: "131072" };

/**
 * Starts `node <script>` as the project's launchers start it, with the given environment, and
 * collects what it prints. Without a WHC_METRICS_PORT in `env` it gets none (0: no metrics
 * listener): test processes run side by side, and the default port would be one for all.
 */
export function startNode(script: string, env: Record<string, string>, args: string[] = []): RunningProcess {
  const child = spawn(process.execPath, ["--enable-source-maps", script, ...args], {
    env: { PATH: process.env.PATH ?? "", ...LAUNCH_ENV, WHC_METRICS_PORT: "0", ...env },
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
