import type { IncomingMessage, ServerResponse } from "node:http";
import { declaredLength } from "./request.js";

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
export function discardBody(req: IncomingMessage): Record<string, string> {
  // Without Content-Length or Transfer-Encoding a request has no body at all.
  const length = declaredLength(req) ?? (req.headers["transfer-encoding"] === undefined ? 0 : undefined);
  if (req.complete || (length !== undefined && length <= DRAIN_LIMIT_BYTES)) {
    req.resume();
    return {};
  }
  return { connection: "close" };
}
