import type { IncomingMessage } from "node:http";
import { AsyncResource } from "node:async_hooks";
import { performance } from "node:perf_hooks";

import { indexedBy, type HeaderPair } from "@whc/signatures";
/** Where a request came from; shared with the gateway, whose audit entries record it. */
export { normaliseIp, remoteIpOf } from "@whc/identity";
import type { OverloadReason, Reservation } from "./budget.js";

/** Header lines exactly as sent: original names, order and repeated values. */
/** Frozen: the signature code then indexes the list once instead of scanning it per lookup. */
export function rawHeaderPairs(req: IncomingMessage): readonly HeaderPair[] {
  const pairs: HeaderPair[] = [];
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) pairs.push([raw[i] as string, raw[i + 1] as string]);
  const frozen = Object.freeze(pairs);
  // No name repeats (as many names in Node's headers object as lines): its values are the
  // lines' own, and header lookups read them there instead of indexing the list.
  const byName = req.headers;
  let names = 0;
  for (const name in byName) if (Object.hasOwn(byName, name)) names += 1;
  if (names === pairs.length) indexedBy(frozen, byName);
  return frozen;
}

/** The body size the sender declared; undefined when it sent none (chunked). Node's parser has checked the header. */
export function declaredLength(req: IncomingMessage): number | undefined {
  const declared = req.headers["content-length"];
  return declared === undefined ? undefined : Number(declared);
}

/**
 * The body's length as known before reading it: the declared one, 0 for a request with
 * neither Content-Length nor Transfer-Encoding (it has no body), undefined for a chunked one.
 */
export function knownBodyLength(req: IncomingMessage): number | undefined {
  return declaredLength(req) ?? (req.headers["transfer-encoding"] === undefined ? 0 : undefined);
}

/**
 * What a request reserves of the admission budget before its body is read: its known length,
 * up to `limit` (past it nothing more is kept). A chunked body starts at 0 and grows.
 */
export function bodyReservation(req: IncomingMessage, limit: number): number {
  return Math.min(knownBodyLength(req) ?? 0, limit);
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

/** A chunked body grew past what the admission budget (or its peer's or endpoint's share) had left: cut off, nothing kept. */
export class BodyOverBudget extends Error {
  constructor(readonly reason: OverloadReason) {
    super("the request body grew past the ingest in-flight budget");
    this.name = "BodyOverBudget";
  }
}

/** The body made no progress for the idle time (WHC_INGEST_BODY_IDLE_MS): cut off, nothing kept. */
export class BodyIdle extends Error {
  constructor(readonly idleMs: number) {
    super(`the request body made no progress for ${idleMs} ms`);
    this.name = "BodyIdle";
  }
}

/** A body being read with an idle limit: when it last made progress (performance.now()). */
interface Watched {
  last: number;
  idleMs: number;
  cut: () => void;
}

/**
 * The bodies being read, watched for idleness by one timer for all: a timer of its own for each
 * body, set and cleared, cost about 1 % of a capture's CPU, for a webhook whose body mostly
 * arrives in the packet its headers came in. The timer looks every quarter of the shortest idle
 * time, so a body is cut between its idle time and a quarter more after its last progress; it
 * stops when it finds nothing to watch, and never keeps the process alive.
 */
const watched = new Set<Watched>();
let sweeper: NodeJS.Timeout | undefined;
let sweepEveryMs = Infinity;
// Started in the context this module was loaded in, not in that of the request that happened to
// start it: a cut body's log line must not carry another request's id.
const startSweeper = AsyncResource.bind((every: number) => setInterval(sweepIdle, every).unref());

function watchIdle(watch: Watched): void {
  watched.add(watch);
  const every = Math.max(1, Math.floor(watch.idleMs / 4));
  if (sweeper !== undefined && every >= sweepEveryMs) return;
  clearInterval(sweeper);
  sweepEveryMs = every;
  sweeper = startSweeper(every);
}

function sweepIdle(): void {
  if (watched.size === 0) {
    clearInterval(sweeper);
    sweeper = undefined;
    sweepEveryMs = Infinity;
    return;
  }
  const now = performance.now();
  for (const watch of watched) if (now - watch.last >= watch.idleMs) watch.cut();
}

export interface ReadLimits {
  /** The first this many bytes are `kept` (stored). */
  keep: number;
  /** Past this many bytes nothing more is read: the body is over the inbound limit. */
  limit: number;
  /** A body from which nothing arrives for this long fails with BodyIdle (0: never). */
  idleMs: number;
}

/**
 * Reads the body as sent (no decoding of Content-Encoding), all of it up to `limit` bytes
 * (a signature covers every byte, even of a body stored truncated), and stops keeping
 * anything once `limit` is passed. `kept` is the first `keep` bytes. Calls back once.
 *
 * It keeps no more than `reservation` holds: a body of known length that arrives in one chunk
 * is that chunk (Node's parser gives each chunk memory of its own, exactly its size), one that
 * arrives in several is copied as it arrives into one buffer of the reserved size (the socket's
 * chunks are dropped at once, and no concatenation doubles the body at the end); a chunked body
 * grows the reservation chunk by chunk and fails with BodyOverBudget when the budget has no
 * room left. A sender that stops sending fails with BodyIdle after `idleMs` (up to a quarter more:
 * watchIdle), so it cannot hold its reservation for long.
 */
export function readBodyThen(
  req: IncomingMessage,
  { keep, limit, idleMs }: ReadLimits,
  reservation: Reservation,
  done: (err: Error | undefined, body?: ReadBody) => void,
): void {
  const known = knownBodyLength(req);
  // A body of known length: the one chunk that was all of it, or else the buffer its chunks are copied into.
  let single: Buffer | undefined;
  let into: Buffer | undefined;
  const chunks: Buffer[] = [];
  let total = 0;
  let stored = 0;
  let overLimit = false;
  let finished = false;
  const watch: Watched | undefined = idleMs > 0 && !req.complete ? { last: performance.now(), idleMs, cut: () => finish(new BodyIdle(idleMs)) } : undefined;
  if (watch) watchIdle(watch);
  const finish = (err?: Error) => {
    if (finished) return;
    finished = true;
    if (watch) watched.delete(watch);
    // The request may outlive its answer (a keep-alive connection): nothing of it may hold the body.
    req.off("data", onData);
    req.off("end", onEnd);
    req.off("error", onError);
    if (err) return done(err);
    const whole = single ?? (into ? into.subarray(0, stored) : chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
    chunks.length = 0;
    done(undefined, { whole, kept: whole.length > keep ? whole.subarray(0, keep) : whole, total, overLimit });
  };
  const onData = (chunk: Buffer) => {
    if (watch) watch.last = performance.now();
    if (total + chunk.length > limit) {
      total += chunk.length;
      overLimit = true;
      // Answer now; the rest of the upload is not worth waiting for.
      return finish();
    }
    if (known !== undefined) {
      // Node's parser delivers no more than the declared length; the reservation covers it.
      if (stored === 0 && chunk.length === known) single = chunk;
      else chunk.copy((into ??= Buffer.allocUnsafe(reservation.bytes)), stored);
    } else {
      const refused = reservation.grow(chunk.length);
      if (refused) return finish(new BodyOverBudget(refused));
      chunks.push(chunk);
    }
    total += chunk.length;
    stored += chunk.length;
  };
  const onEnd = () => finish();
  const onError = (err: Error) => finish(err);
  req.on("data", onData);
  req.on("end", onEnd);
  req.on("error", onError);
}
