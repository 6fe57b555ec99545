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

/** How a connection answered before its body was read lingers (closeAfterAnswer). */
export interface Lingering {
  /** Told how many bytes were dropped once the socket closes (they are garbage). */
  dropped?: (bytes: number) => void;
  /** The connection is cut once nothing has arrived for this long (the body stopped flowing). */
  idleMs: number;
}

/**
 * For an answer that stores nothing (404, paused, overloaded): headers that let the rest of
 * the body be skipped. A small body is read and dropped so the connection can serve the
 * sender's next request; a large or unsized one is drained after the answer, and the
 * connection closes once it ends (closeAfterAnswer).
 */
export function discardBody(req: IncomingMessage, lingering: Lingering): Record<string, string> {
  const length = knownBodyLength(req);
  if (req.complete || (length !== undefined && length <= DRAIN_LIMIT_BYTES)) {
    req.resume();
    return {};
  }
  return closeAfterAnswer(req, lingering);
}

/** The longest a connection closed after its answer is still read from (nginx's lingering_time). */
export const LINGER_MAX_MS = 30_000;

/**
 * `Connection: close` for an answer sent before the request's body was read, and a lingering
 * close behind it (nginx's). Node would close the socket as soon as the answer is written;
 * with the sender's body still arriving, the kernel then resets the connection, and a sender
 * still writing (most clients, fetch among them, only read the answer once their body is
 * sent) sees ECONNRESET or EPIPE instead of the answer: measured, 58 of 100 senders of 9 MiB
 * to a paused endpoint. Here only the sending half closes after the answer; what still
 * arrives is read and dropped as it comes (never kept) until the body ends, and the socket is
 * destroyed then, or once nothing has arrived for `idleMs`, or after LINGER_MAX_MS however
 * it flows: a sender cannot stream into a refused request for long.
 */
export function closeAfterAnswer(req: IncomingMessage, { dropped: onDropped, idleMs }: Lingering): Record<string, string> {
  const socket = req.socket;
  if (req.complete || socket.destroyed) return { connection: "close" };
  let dropped = 0;
  let answered = false;
  const cut = () => socket.destroy();
  const atMost = setTimeout(cut, LINGER_MAX_MS);
  const quiet = setTimeout(cut, Math.min(idleMs, LINGER_MAX_MS));
  atMost.unref();
  quiet.unref();
  socket.once("close", () => {
    clearTimeout(atMost);
    clearTimeout(quiet);
    onDropped?.(dropped);
  });
  const closeOnceFlushed = () => (socket.writableFinished ? cut() : socket.once("finish", cut));
  req.on("data", (chunk: Buffer) => {
    dropped += chunk.length;
    quiet.refresh();
  });
  req.once("end", () => {
    if (answered) closeOnceFlushed();
  });
  // The body may have been paused (nobody read it while the answer was prepared).
  req.resume();
  // Node ends a `Connection: close` answer with socket.destroySoon(): end, then destroy once
  // flushed. Only the end is kept here; the body's end or the timers destroy it.
  socket.destroySoon = () => {
    answered = true;
    socket.end();
    if (req.complete) closeOnceFlushed();
  };
  return { connection: "close" };
}
