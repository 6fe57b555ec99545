import type { IncomingMessage, ServerResponse } from "node:http";
import { knownBodyLength } from "./request.js";

export const NOT_FOUND = { ok: false, error: "not_found", message: "No endpoint receives at this URL." };

export function reply(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** Bodies larger than this are not read just to be thrown away (answers that store nothing). */
const DRAIN_LIMIT_BYTES = 64 * 1024;

/**
 * For an answer that stores nothing (404, paused): headers that let the rest of the body be
 * skipped. A small body is read and dropped so the connection can serve the sender's next
 * request; a large or unsized one is not read at all, and the connection closes after the
 * answer instead.
 */
export function discardBody(req: IncomingMessage, dropped?: (bytes: number) => void): Record<string, string> {
  const length = knownBodyLength(req);
  if (req.complete || (length !== undefined && length <= DRAIN_LIMIT_BYTES)) {
    req.resume();
    return {};
  }
  return closeAfterAnswer(req, dropped);
}

/** How long a connection closed after its answer is still read from (and what arrives dropped). */
export const LINGER_MS = 2000;
/** The most body bytes dropped while lingering before the connection is cut. */
export const LINGER_MAX_BYTES = 1024 * 1024;

/**
 * `Connection: close` for an answer sent before the request's body was read, and a lingering
 * close behind it. Node would close the socket as soon as the answer is written; with the
 * sender's body still arriving, the kernel then resets the connection, and a sender still
 * writing (most clients only read the answer once their body is sent) sees ECONNRESET or
 * EPIPE instead of the answer: measured, 58 of 100 senders of 9 MiB to a paused endpoint.
 * Here only the sending half closes after the answer; what still arrives is dropped as it
 * comes (never kept) until the body ends, and the socket is destroyed then, or after
 * LINGER_MS, or past LINGER_MAX_BYTES: a sender cannot stream into a refused request for long.
 * `onDropped` is told how many bytes were dropped once the socket closes (they are garbage).
 */
export function closeAfterAnswer(req: IncomingMessage, onDropped?: (bytes: number) => void): Record<string, string> {
  const socket = req.socket;
  if (req.complete || socket.destroyed) return { connection: "close" };
  let dropped = 0;
  let answered = false;
  const cut = () => socket.destroy();
  const timer = setTimeout(cut, LINGER_MS);
  timer.unref();
  socket.once("close", () => {
    clearTimeout(timer);
    onDropped?.(dropped);
  });
  const closeOnceFlushed = () => (socket.writableFinished ? cut() : socket.once("finish", cut));
  req.on("data", (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > LINGER_MAX_BYTES) cut();
  });
  req.once("end", () => {
    if (answered) closeOnceFlushed();
  });
  // Node ends a `Connection: close` answer with socket.destroySoon(): end, then destroy once
  // flushed. Only the end is kept here; the body's end, the timer or the cap destroys it.
  socket.destroySoon = () => {
    answered = true;
    socket.end();
    if (req.complete) closeOnceFlushed();
  };
  return { connection: "close" };
}
