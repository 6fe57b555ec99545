import http from "node:http";
import type { AddressInfo } from "node:net";

/** One request a destination received, body and all. */
export interface ReceivedRequest {
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface TestDestination {
  url: string;
  received: ReceivedRequest[];
  close(): Promise<void>;
}

/**
 * A local destination for forwards and replays: records every request and answers the given
 * statuses in turn (the last one from then on; 200 without any).
 */
export async function startDestination(...statuses: number[]): Promise<TestDestination> {
  const received: ReceivedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks) });
      res.statusCode = statuses[Math.min(received.length - 1, statuses.length - 1)] ?? 200;
      res.end("ok");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}
