import http from "node:http";
import type { AddressInfo } from "node:net";

/** One request a timed destination received: when, which delivery and attempt, and its answer. */
export interface Arrival {
  at: number;
  deliveryId: string;
  attempt: number;
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface TimedDestination {
  url: string;
  /** Every request, in arrival order. */
  arrivals: Arrival[];
  close(): Promise<void>;
}

/**
 * A local destination for delivery control (design §18): answers `status()` at each request
 * (a test flips it to bring the destination down or back) and keeps every arrival with its time,
 * so a test can read a rate limit's windows, a breaker's probes and a drain's order.
 */
export async function timedDestination(status: () => number): Promise<TimedDestination> {
  const arrivals: Arrival[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const answer = status();
      arrivals.push({
        at: Date.now(),
        deliveryId: String(req.headers["x-whc-delivery-id"]),
        attempt: Number(req.headers["x-whc-attempt"]),
        status: answer,
        headers: req.headers as Record<string, string>,
        body: Buffer.concat(chunks).toString("utf8"),
      });
      res.writeHead(answer).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrivals,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

/** The most of `times` in any window of `ms` (sliding: every time starts one). */
export function busiestWindow(times: readonly number[], ms: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i += 1) {
    while (sorted[j]! < sorted[i]! - ms + 1) j += 1;
    most = Math.max(most, i - j + 1);
  }
  return most;
}
