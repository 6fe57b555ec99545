import http from "node:http";
import type { AddressInfo } from "node:net";

/** One request a destination received, with the delivery it says it is. */
export interface DestinationRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** X-Whc-Delivery-Id and X-Whc-Attempt. */
  deliveryId: string;
  attempt: string;
}

export interface GatedDestination {
  url: string;
  /** Every request that arrived, in arrival order. */
  received: DestinationRequest[];
  /** Requests answered 2xx on a connection that was still open: what an app would have acted on. */
  accepted: DestinationRequest[];
  /** Requests whose sender went away (its process killed) before they were answered. */
  abandoned: DestinationRequest[];
  /** Requests waiting for the gate now. */
  held(): number;
  /** Of those, how many lost their connection (their sender died): seen before `open()`, so they are never answered. */
  heldGone(): number;
  /**
   * Resolves once the server has read everything already sent to it: a request of its own,
   * answered at once and never counted. After a sender's process has exited (its sockets closed
   * by the kernel before the exit is reported), its held requests then show as gone.
   */
  settle(): Promise<void>;
  /** Answers everything held, and every later request at once. */
  open(): void;
  close(): Promise<void>;
}

/**
 * A local destination for delivery tests (design §17): with `gated`, it holds every request
 * unanswered until `open()`, so a test can kill a sender while its attempts are in flight and
 * then tell what an app would have acted on (`accepted`: answered on a live connection) from what
 * it never finished (`abandoned`: the sender's connection closed first). Each counted once.
 */
const PROBE = "/__gated-destination-probe";

export async function gatedDestination(options: { gated?: boolean; status?: (r: DestinationRequest) => number } = {}): Promise<GatedDestination> {
  const received: DestinationRequest[] = [];
  const accepted: DestinationRequest[] = [];
  const abandoned: DestinationRequest[] = [];
  const waiting: { answer: () => void; gone: () => boolean }[] = [];
  let gated = options.gated ?? false;

  const server = http.createServer((req, res) => {
    if (req.url === PROBE) return void res.end();
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const r: DestinationRequest = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks),
        deliveryId: String(req.headers["x-whc-delivery-id"] ?? ""),
        attempt: String(req.headers["x-whc-attempt"] ?? ""),
      };
      received.push(r);
      let gone = false;
      res.on("close", () => {
        if (!res.writableFinished) gone = true;
      });
      const answer = () => {
        if (gone || res.destroyed || req.socket.destroyed) {
          abandoned.push(r);
          return;
        }
        const status = options.status?.(r) ?? 200;
        res.statusCode = status;
        res.end("ok", () => {
          if (status >= 200 && status < 300) accepted.push(r);
        });
      };
      if (gated) waiting.push({ answer, gone: () => gone || req.socket.destroyed });
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    accepted,
    abandoned,
    held: () => waiting.length,
    heldGone: () => waiting.filter((w) => w.gone()).length,
    async settle() {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${PROBE}`);
      await res.arrayBuffer();
      await new Promise((resolve) => setImmediate(resolve));
    },
    open() {
      gated = false;
      for (const w of waiting.splice(0)) w.answer();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
