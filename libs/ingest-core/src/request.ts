import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";

import type { HeaderPair } from "@whc/signatures";

/** Header lines exactly as sent: original names, order and repeated values. */
/** Frozen: the signature code then indexes the list once instead of scanning it per lookup. */
export function rawHeaderPairs(req: IncomingMessage): readonly HeaderPair[] {
  const pairs: HeaderPair[] = [];
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) pairs.push([raw[i] as string, raw[i + 1] as string]);
  return Object.freeze(pairs);
}

/**
 * One X-Forwarded-For entry as an address: some proxies (Azure's among them) append the
 * port, as `203.0.113.5:4711` or `[2001:db8::1]:4711`.
 */
function forwardedAddress(entry: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(entry);
  if (bracketed) return bracketed[1] as string;
  const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(entry);
  return v4WithPort ? (v4WithPort[1] as string) : entry;
}

export function normaliseIp(address: string | undefined): string {
  if (!address) return "";
  return address.startsWith("::ffff:") && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/**
 * The sender's address: the socket peer, unless that peer is a trusted proxy, in which case
 * X-Forwarded-For is walked from the right past trusted proxies to the first other address.
 */
export function remoteIpOf(req: IncomingMessage, trustedProxies: ReadonlySet<string>): string {
  const peer = normaliseIp(req.socket.remoteAddress);
  if (!trustedProxies.has(peer)) return peer;
  const forwarded = req.headers["x-forwarded-for"];
  const chain = (Array.isArray(forwarded) ? forwarded.join(",") : (forwarded ?? ""))
    .split(",")
    .map((s) => normaliseIp(forwardedAddress(s.trim())))
    .filter((s) => isIP(s) !== 0);
  for (let i = chain.length - 1; i >= 0; i -= 1) {
    const hop = chain[i] as string;
    if (!trustedProxies.has(hop)) return hop;
  }
  return chain[0] ?? peer;
}

/** The body size the sender declared; undefined when it sent none (chunked). Node's parser has checked the header. */
export function declaredLength(req: IncomingMessage): number | undefined {
  const declared = req.headers["content-length"];
  return declared === undefined ? undefined : Number(declared);
}

/**
 * The size of a body cut off at the limit: the Content-Length the sender declared when there
 * is one (the rest was never read), else the bytes that had arrived.
 */
export function originalSize(req: IncomingMessage, body: ReadBody): number {
  return body.overLimit ? Math.max(declaredLength(req) ?? 0, body.total) : body.total;
}

export interface ReadBody {
  /** Every byte of the body (when not over the limit): what signatures and event types are judged on. */
  whole: Buffer;
  /** The first `keep` bytes of it: what is stored. */
  kept: Buffer;
  /** Every byte that arrived. */
  total: number;
  /** More than `limit` bytes arrived: the rest was discarded, and `whole` is only a start. */
  overLimit: boolean;
}

/**
 * Reads the body as sent (no decoding of Content-Encoding), all of it up to `limit` bytes
 * (a signature covers every byte, even of a body stored truncated), and stops keeping
 * anything once `limit` is passed. `kept` is the first `keep` bytes. Calls back once.
 */
export function readBodyThen(
  req: IncomingMessage,
  keep: number,
  limit: number,
  done: (err: Error | undefined, body?: ReadBody) => void,
): void {
  const chunks: Buffer[] = [];
  let total = 0;
  let overLimit = false;
  let finished = false;
  const finish = (err?: Error) => {
    if (finished) return;
    finished = true;
    if (err) return done(err);
    const whole = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
    done(undefined, { whole, kept: whole.length > keep ? whole.subarray(0, keep) : whole, total, overLimit });
  };
  req.on("data", (chunk: Buffer) => {
    total += chunk.length;
    if (total > limit && !overLimit) {
      overLimit = true;
      // Answer now; the rest of the upload is not worth waiting for.
      finish();
      return;
    }
    if (overLimit) return;
    chunks.push(chunk);
  });
  req.on("end", () => finish());
  req.on("error", (err) => finish(err));
}
