import http from "node:http";
import http2 from "node:http2";
import net, { type AddressInfo } from "node:net";

/** What every HTTP/2 client sends first (RFC 9113 §3.4); nothing HTTP/1.1 can start with it. */
const H2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");
/** A peer that connects and says nothing is let go (Node's own figure for an unknown protocol). */
const FIRST_BYTES_TIMEOUT_MS = 10_000;
/** Longer than the idle spell of keep-alive scrapers and proxies, so they close first. */
const HTTP1_KEEP_ALIVE_MS = 65_000;

export type CleartextHandler = (
  req: http.IncomingMessage | http2.Http2ServerRequest,
  res: http.ServerResponse | http2.Http2ServerResponse,
) => void;

export interface CleartextListener {
  readonly port: number;
  /** Stops accepting; in-flight requests of both kinds finish; resolves once every connection has ended. */
  close(): Promise<void>;
}

/**
 * One port, one handler, two protocols: HTTP/2 with prior knowledge (h2c: Connect and gRPC
 * clients) and HTTP/1.1 (Prometheus, curl, fetch). Node's http2 server cannot answer HTTP/1.1
 * without TLS (allowHTTP1 relies on ALPN), so each connection's first bytes choose: the HTTP/2
 * preface goes to an http2 server, anything else to an http server. Neither of them listens;
 * a plain TCP server accepts and hands each socket over with the bytes it read put back.
 */
export async function listenCleartext(handler: CleartextHandler, port: number, host: string): Promise<CleartextListener> {
  const h2 = http2.createServer(handler);
  const h1 = http.createServer({ keepAliveTimeout: HTTP1_KEEP_ALIVE_MS }, handler);
  // Node starts an http server's connection tracking (headersTimeout, requestTimeout and
  // closeIdleConnections depend on it) when it listens, which this one never does.
  h1.emit("listening");

  const sessions = new Set<http2.ServerHttp2Session>();
  const sniffing = new Set<net.Socket>();
  h2.on("session", (session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
  });

  // allowHalfOpen and noDelay as the http server would have accepted them; the http2 side
  // gets its own (no half-open) back at hand-over.
  const listener = net.createServer({ allowHalfOpen: true, noDelay: true }, (socket) => {
    sniffing.add(socket);
    socket.once("close", () => sniffing.delete(socket));
    sniff(socket, (isH2) => {
      sniffing.delete(socket);
      if (isH2) {
        socket.allowHalfOpen = false;
        h2.emit("connection", socket);
      } else {
        h1.emit("connection", socket);
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    listener.once("error", reject);
    listener.listen(port, host, () => {
      listener.off("error", reject);
      resolve();
    });
  });

  return {
    port: (listener.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        // A keep-alive HTTP/1.1 socket is ended as soon as its request in flight is answered.
        const sweep = setInterval(() => h1.closeIdleConnections(), 50);
        listener.close(() => {
          clearInterval(sweep);
          resolve();
        });
        for (const socket of sniffing) socket.destroy();
        // Ask HTTP/2 peers to stop opening streams; in-flight ones finish, idle sessions end.
        for (const session of sessions) session.close();
        // Ends idle HTTP/1.1 sockets and stops the connection checks started above.
        h1.close();
      }),
  };
}

/**
 * Reads until the bytes seen either are the whole HTTP/2 preface or stop matching it, puts
 * them back and calls `route` once. A peer that closes, fails or stays silent before that is
 * dropped without reaching either server.
 */
function sniff(socket: net.Socket, route: (isH2: boolean) => void): void {
  let seen = Buffer.alloc(0);
  const timer = setTimeout(() => socket.destroy(), FIRST_BYTES_TIMEOUT_MS);
  const finish = () => {
    clearTimeout(timer);
    socket.off("readable", onReadable);
    for (const event of ["end", "error", "close"]) socket.off(event, onGone);
  };
  const onGone = () => {
    finish();
    socket.destroy();
  };
  const onReadable = () => {
    let chunk: Buffer | null;
    while ((chunk = socket.read() as Buffer | null) !== null) seen = Buffer.concat([seen, chunk]);
    const n = Math.min(seen.length, H2_PREFACE.length);
    const matching = seen.subarray(0, n).equals(H2_PREFACE.subarray(0, n));
    if (seen.length === 0 || (matching && n < H2_PREFACE.length)) return;
    finish();
    socket.unshift(seen);
    route(matching);
  };
  socket.on("readable", onReadable);
  for (const event of ["end", "error", "close"]) socket.on(event, onGone);
}
