import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

/** Binds `port` (0: any) on 127.0.0.1 and closes it again: the port, or undefined when it was taken. */
function probe(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.on("error", () => resolve(undefined));
    server.listen(port, "127.0.0.1", () => {
      const bound = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(bound));
    });
  });
}

/**
 * Below Linux's ephemeral range (32768-60999 by default): the kernel gives those to outgoing
 * connections and to port-0 listeners, so a port picked there can be taken by any client of
 * the machine between this check and the server's bind (a CI run failed on EADDRINUSE so).
 */
const PICK_FROM = 20_000;
const PICK_SPAN = 12_000;

/**
 * Ports handed out are reserved on the machine for as long as the test process that took them
 * lives: a file per port, created exclusively, holding the taker's pid. Test files run side by
 * side in many processes, and a test that stops a service and starts it again on its port
 * leaves that port free meanwhile; without the reservation another process could pick it then
 * (a CI run's restart failed on EADDRINUSE so), or bind it for a moment to probe it.
 */
const RESERVED_DIR = path.join(os.tmpdir(), "whc-test-ports");
const reserved = new Set<string>();
let cleanupInstalled = false;

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Reserves `port` for this process: false when another living process (or this one) holds it. */
export function reservePort(port: number): boolean {
  const file = path.join(RESERVED_DIR, String(port));
  fs.mkdirSync(RESERVED_DIR, { recursive: true });
  if (!create(file) && !takeOver(file)) return false;
  reserved.add(file);
  if (!cleanupInstalled) {
    cleanupInstalled = true;
    process.once("exit", () => {
      for (const f of reserved) fs.rmSync(f, { force: true });
    });
  }
  return true;
}

function create(file: string): boolean {
  try {
    fs.writeFileSync(file, String(process.pid), { flag: "wx" });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    return false;
  }
}

function ownerAlive(file: string): boolean {
  try {
    return alive(Number(fs.readFileSync(file, "utf8")));
  } catch {
    return false;
  }
}

/**
 * A reservation whose process is gone (test workers are often ended without their exit hooks)
 * is taken over by one process at a time: the one that creates its `.takeover` file.
 */
function takeOver(file: string): boolean {
  if (ownerAlive(file)) return false;
  const lock = `${file}.takeover`;
  if (!create(lock)) {
    // Left by a process that died within the few microseconds it holds one.
    try {
      if (!ownerAlive(lock) && Date.now() - fs.statSync(lock).mtimeMs > 10_000) fs.rmSync(lock, { force: true });
    } catch {
      // Gone meanwhile.
    }
    return false;
  }
  try {
    if (ownerAlive(file)) return false;
    fs.writeFileSync(file, String(process.pid));
    return true;
  } finally {
    fs.rmSync(lock, { force: true });
  }
}

/**
 * A TCP port that was free on 127.0.0.1 a moment ago, outside the ephemeral range when one is
 * free there, and reserved against every other test process of the machine while this one lives.
 */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 50; tries += 1) {
    const candidate = PICK_FROM + Math.floor(Math.random() * PICK_SPAN);
    if (!reservePort(candidate)) continue;
    const port = await probe(candidate);
    if (port !== undefined) return port;
  }
  const any = await probe(0);
  if (any === undefined) throw new Error("no free TCP port on 127.0.0.1");
  return any;
}

export async function waitFor<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  { timeoutMs = 15_000, intervalMs = 50, what = "condition" } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value as T;
    } catch (err) {
      lastError = err;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`timed out waiting for ${what}${lastError ? `: ${String(lastError)}` : ""}`);
}
