import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";

/** Node's own answers to bytes its parser refuses, by the parser's error code. */
const REFUSALS: Record<string, string> = {
  HPE_HEADER_OVERFLOW: "431 Request Header Fields Too Large",
  HPE_CHUNK_EXTENSIONS_OVERFLOW: "413 Payload Too Large",
  ERR_HTTP_REQUEST_TIMEOUT: "408 Request Timeout",
};

/**
 * What ingest answers bytes Node's HTTP parser refuses (the server's `clientError`). Node's
 * default is a 400 and an immediate close, also when those bytes follow a complete request
 * that is still being stored: its sender then reads the 400 as its own answer while its
 * capture is stored (found by the socket fuzz: a Content-Length shorter than the bytes sent).
 * Here a complete request in flight gets its own answer first, and the connection closes
 * after it without reading on; anything else is refused as Node refuses it.
 *
 * `track` is called with each request as it reaches the handler.
 */
export function createParseErrorAnswers() {
  const current = new WeakMap<Duplex, { req: IncomingMessage; res: ServerResponse }>();
  return {
    track(req: IncomingMessage, res: ServerResponse): void {
      const entry = { req, res };
      current.set(req.socket, entry);
      // Dropped once answered: a keep-alive connection must not keep its last request (and
      // what that request's listeners hold, its body) alive until it closes.
      res.once("close", () => {
        if (current.get(req.socket) === entry) current.delete(req.socket);
      });
    },
    onClientError(err: Error & { code?: string }, socket: Duplex): void {
      const inFlight = current.get(socket);
      const answering = inFlight !== undefined && !inFlight.res.writableEnded && !socket.destroyed;
      if (answering && inFlight.req.complete) {
        if (!inFlight.res.headersSent) inFlight.res.setHeader("connection", "close");
        // Node stops listening for the socket's errors once it reports a parse error.
        if (socket.listenerCount("error") === 0) socket.on("error", () => socket.destroy());
        return;
      }
      if (socket.writable && !(answering && inFlight.res.headersSent)) {
        socket.write(`HTTP/1.1 ${REFUSALS[err.code ?? ""] ?? "400 Bad Request"}\r\nConnection: close\r\n\r\n`);
      }
      socket.destroy();
    },
  };
}
