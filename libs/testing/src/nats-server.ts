import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { freePort } from "./ports.js";
import { tempDir } from "./temp.js";

export const NATS_SERVER_BIN = process.env.WHC_NATS_SERVER_BIN ?? "/usr/sbin/nats-server";

export interface NatsServer {
  url: string;
  port: number;
  stop(): Promise<void>;
  /** Stops the server but keeps its store, for a later start on the same port. */
  pause(): Promise<void>;
  resume(): Promise<void>;
}

function startProcess(port: number, storeDir: string): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(NATS_SERVER_BIN, ["-js", "-sd", storeDir, "-a", "127.0.0.1", "-p", String(port)], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let output = "";
    const timer = setTimeout(() => reject(new Error(`nats-server did not start: ${output}`)), 10_000);
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("Server is ready")) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`nats-server exited with ${code}: ${output}`));
    });
  });
}

function stopProcess(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

/** A private nats-server with JetStream on a free port and a temporary store. */
export async function startNatsServer(): Promise<NatsServer> {
  if (!existsSync(NATS_SERVER_BIN)) throw new Error(`${NATS_SERVER_BIN} is missing (apt-get install -y nats-server)`);
  const port = await freePort();
  const store = tempDir("whc-nats-");
  let child: ChildProcess | undefined = await startProcess(port, store.path);
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    async pause() {
      if (child) await stopProcess(child);
      child = undefined;
    },
    async resume() {
      child ??= await startProcess(port, store.path);
    },
    async stop() {
      if (child) await stopProcess(child);
      child = undefined;
      store.remove();
    },
  };
}
