import net from "node:net";

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

/** A TCP port that was free on 127.0.0.1 a moment ago, outside the ephemeral range when one is free there. */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 50; tries += 1) {
    const port = await probe(PICK_FROM + Math.floor(Math.random() * PICK_SPAN));
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
