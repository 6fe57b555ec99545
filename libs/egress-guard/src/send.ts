import http from "node:http";
import https from "node:https";
import net, { type LookupFunction, type Socket } from "node:net";
import tls from "node:tls";
import { performance } from "node:perf_hooks";
import type { ParsedTarget } from "./target.js";
import { HOP_BY_HOP_HEADERS } from "@whc/api-model";

export type NetworkFailure =
  | "dns_failure"
  | "connection_refused"
  | "connection_reset"
  | "timeout"
  | "tls_error"
  | "too_many_redirects"
  | "host_unreachable"
  | "protocol_error";

export interface SendInput {
  target: ParsedTarget;
  address: string;
  family: 4 | 6;
  method: string;
  headers: readonly (readonly [string, string])[];
  body: Uint8Array | undefined;
  connectTimeoutMs: number;
  totalTimeoutMs: number;
  maxExcerptBytes: number;
  /**
   * Opens the connection instead of net.connect / tls.connect (a test seam: injected socket
   * failures). It gets what Node's agent would pass them, the pinned lookup included.
   */
  connect?: ConnectFunction | undefined;
}

/** `secure`: the request is https (Node would call tls.connect). */
export type ConnectFunction = (options: net.NetConnectOpts & tls.ConnectionOptions, secure: boolean) => Socket;

export type SendResult =
  | {
      kind: "response";
      status: number;
      headers: Record<string, string | string[]>;
      /** The answer's header lines as received: names as spelled, in order, repeats kept. */
      rawHeaders: [string, string][];
      excerpt: Buffer;
      excerptTruncated: boolean;
      durationMs: number;
    }
  | { kind: "network_error"; reason: NetworkFailure; durationMs: number };

/** Headers that describe one hop, or that this request computes itself. */
export const HOP_BY_HOP: ReadonlySet<string> = new Set([...HOP_BY_HOP_HEADERS, "content-length", "host"]);

function pairsOf(raw: string[]): [string, string][] {
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) pairs.push([raw[i] as string, raw[i + 1] as string]);
  return pairs;
}

export function failureOf(err: unknown): NetworkFailure {
  const code = String((err as { code?: string }).code ?? "");
  const message = String((err as { message?: string }).message ?? "");
  if (code === "ECONNREFUSED") return "connection_refused";
  if (code === "ECONNRESET" || code === "EPIPE" || message.includes("socket hang up")) return "connection_reset";
  if (code === "ETIMEDOUT" || code === "WHC_TIMEOUT") return "timeout";
  // EACCES/EPERM: a local firewall, or an address this host may not send to (a broadcast).
  if (["EHOSTUNREACH", "ENETUNREACH", "EADDRNOTAVAIL", "EHOSTDOWN", "ENETDOWN", "EACCES", "EPERM", "EAFNOSUPPORT"].includes(code)) return "host_unreachable";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return "dns_failure";
  if (code.startsWith("HPE_")) return "protocol_error";
  if (code.startsWith("ERR_SSL") || code.startsWith("CERT_") || code.includes("CERT") || code === "EPROTO" || /ssl|tls|certificate/i.test(message)) {
    return "tls_error";
  }
  return "connection_reset";
}

/**
 * Connections kept for the next request to the same vetted address (ADR 0096): a forward's
 * deliveries to one destination reuse a few sockets instead of a TCP connection (and a TLS
 * handshake) each. A socket is kept under its URL's host, port and TLS name *and* the address
 * vetted for it, so a request vetted to another address (DNS changed) never rides it; it stays
 * idle at most `idleMs` (less when the destination announces a shorter `Keep-Alive: timeout`),
 * at most `maxIdlePerAddress` of them per address and `maxSockets` in all.
 */
export interface ConnectionPool {
  readonly http: http.Agent;
  readonly https: https.Agent;
  /** Closes every connection the pool holds, idle or not (a stopping process). */
  close(): void;
}

export interface ConnectionPoolOptions {
  connect?: ConnectFunction | undefined;
  idleMs?: number;
  maxIdlePerAddress?: number;
  maxSockets?: number;
}

/** Per request, through the agent to its connection: the address it was vetted to, and where a socket's error goes. */
interface PoolRequestOptions {
  whcAddress: string;
  whcFail: (err: Error) => void;
}

/** The request a pooled socket serves now: its errors are that request's outcome, whenever they come. */
const owners = new WeakMap<Socket, (err: Error) => void>();

/** Opens a connection whose every error, from its first moment, goes to the request that holds it. */
function opener(connect: ConnectFunction | undefined, secure: boolean) {
  return (options: net.NetConnectOpts & tls.ConnectionOptions & Partial<PoolRequestOptions>): Socket => {
    const socket = connect ? connect(options, secure) : secure ? tls.connect(options) : net.connect(options);
    if (options.whcFail) owners.set(socket, options.whcFail);
    socket.on("error", (err) => owners.get(socket)?.(err));
    return socket;
  };
}

export function createConnectionPool(options: ConnectionPoolOptions = {}): ConnectionPool {
  const settings = {
    keepAlive: true,
    timeout: options.idleMs ?? 4000,
    maxFreeSockets: options.maxIdlePerAddress ?? 16,
    maxTotalSockets: options.maxSockets ?? 512,
    scheduling: "lifo" as const,
  };
  const pinned = <A extends http.Agent>(agent: A, secure: boolean): A => {
    const name = agent.getName.bind(agent) as (o: object) => string;
    (agent as unknown as { getName: (o: object & Partial<PoolRequestOptions>) => string }).getName = (o) => `${name(o)}|${o.whcAddress ?? ""}`;
    (agent as unknown as { createConnection: unknown }).createConnection = opener(options.connect, secure);
    return agent;
  };
  const pool = { http: pinned(new http.Agent(settings), false), https: pinned(new https.Agent(settings), true) };
  return {
    ...pool,
    close() {
      pool.http.destroy();
      pool.https.destroy();
    },
  };
}

/** A pooled request's kept connection was closed by the destination before it answered: sent again on a new one. */
const STALE = Symbol("stale");

/**
 * One request to the vetted address: no redirects followed (a 3xx is an answer), no
 * decompression. TLS still checks the certificate against the URL's host name, although the
 * socket goes to the address that was vetted. At most `maxExcerptBytes` of the answer are read;
 * then the connection is dropped. Without `pool`, over a connection of its own (no keep-alive);
 * with it, over a kept connection to the same vetted address when one is idle, and when that
 * connection turns out closed before any answer (the destination's idle timeout met our
 * request on the wire), once more over a new one, as HTTP clients do for a reused socket.
 */
export async function sendOnce(input: SendInput, pool?: ConnectionPool): Promise<SendResult> {
  const started = performance.now();
  const first = await exchange(input, started, pool);
  return first === STALE ? ((await exchange(input, started, undefined)) as SendResult) : first;
}

function exchange(input: SendInput, started: number, pool: ConnectionPool | undefined): Promise<SendResult | typeof STALE> {
  const elapsed = () => Math.round(performance.now() - started);
  const { target } = input;
  const secure = target.url.protocol === "https:";
  // The connection goes to the vetted address whatever the name would resolve to now. The
  // answer comes on a later turn, as a real lookup's does: answered at once, Node connected
  // and failed (an unroutable address, a firewall's EACCES) before anything listened for the
  // error, and the process died (issue #29).
  const pinned: LookupFunction = (_hostname, options, callback) => {
    setImmediate(() => {
      if ((options as { all?: boolean }).all) {
        (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [
          { address: input.address, family: input.family },
        ]);
      } else callback(null, input.address, input.family);
    });
  };

  return new Promise((resolve) => {
    let settled = false;
    let answered = false;
    const finish = (result: SendResult | typeof STALE) => {
      if (settled) return;
      settled = true;
      clearTimeout(total);
      clearTimeout(connect);
      resolve(result);
    };
    let req: http.ClientRequest | undefined;
    const failWith = (reason: NetworkFailure) => {
      finish(pool && req?.reusedSocket && !answered && reason === "connection_reset" ? STALE : { kind: "network_error", reason, durationMs: elapsed() });
      req?.destroy();
    };
    const onError = (err: Error) => failWith(failureOf(err));
    const total = setTimeout(() => failWith("timeout"), Math.max(1, input.totalTimeoutMs - elapsed()));
    const connect = setTimeout(() => failWith("timeout"), input.connectTimeoutMs);
    try {
      req = request(input, secure, pinned, onError, pool);
    } catch (err) {
      // Options Node's client refuses synchronously (they were vetted, so this is rare): an outcome, not a throw.
      onError(err as Error);
      return;
    }
    const names = new Map<string, string>();
    const values = new Map<string, string[]>();
    for (const [name, value] of input.headers) {
      const lower = name.toLowerCase();
      if (HOP_BY_HOP.has(lower)) continue;
      if (!names.has(lower)) names.set(lower, name);
      (values.get(lower) ?? values.set(lower, []).get(lower)!).push(value);
    }
    req.setHeader("Host", target.url.host);
    for (const [lower, name] of names) {
      const list = values.get(lower)!;
      try {
        req.setHeader(name, list.length === 1 ? (list[0] as string) : list);
      } catch {
        // A value Node's client refuses (it accepted it as a server): left out, not fatal.
      }
    }
    if (input.body && input.body.length > 0) req.setHeader("Content-Length", input.body.length);
    else if (!["GET", "HEAD", "DELETE", "OPTIONS"].includes(input.method.toUpperCase())) req.setHeader("Content-Length", 0);

    const sent = req;
    req.on("socket", (socket) => {
      owners.set(socket, onError);
      const connected = () => clearTimeout(connect);
      if (sent.reusedSocket) connected();
      else if (secure) socket.once("secureConnect", connected);
      else socket.once("connect", connected);
    });
    req.on("error", onError);
    req.on("response", (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      const done = () =>
        finish({
          kind: "response",
          status: res.statusCode ?? 0,
          headers: res.headers as Record<string, string | string[]>,
          rawHeaders: pairsOf(res.rawHeaders),
          excerpt: Buffer.concat(chunks, size),
          excerptTruncated: truncated,
          durationMs: elapsed(),
        });
      res.on("data", (chunk: Buffer) => {
        const room = input.maxExcerptBytes - size;
        if (chunk.length > room) {
          if (room > 0) {
            chunks.push(chunk.subarray(0, room));
            size += room;
          }
          truncated = true;
          done();
          res.destroy();
          return;
        }
        chunks.push(chunk);
        size += chunk.length;
      });
      res.on("end", done);
      res.on("error", () => done());
      res.on("close", done);
    });
    try {
      req.end(input.body && input.body.length > 0 ? Buffer.from(input.body) : undefined);
    } catch (err) {
      onError(err as Error);
    }
  });
}

/**
 * The request, over the pool's connection to the vetted address, or over one of its own (no
 * keep-alive). Every socket gets an error listener the moment it exists, before Node's client
 * attaches its own: whatever the socket does and whenever, its error is the outcome of the
 * request that holds it, never an unhandled event.
 */
function request(input: SendInput, secure: boolean, lookup: LookupFunction, onSocketError: (err: Error) => void, pool: ConnectionPool | undefined): http.ClientRequest {
  const { target } = input;
  let agent: http.Agent;
  if (pool) agent = secure ? pool.https : pool.http;
  else {
    agent = new (secure ? https.Agent : http.Agent)({ keepAlive: false });
    (agent as unknown as { createConnection: unknown }).createConnection = opener(input.connect, secure);
  }
  const pinnedTo: PoolRequestOptions = { whcAddress: input.address, whcFail: onSocketError };
  return (secure ? https.request : http.request)({
    protocol: target.url.protocol,
    host: target.hostname,
    port: target.port,
    method: input.method,
    path: `${target.url.pathname}${target.url.search}`,
    lookup,
    agent,
    setHost: false,
    ...pinnedTo,
    ...(secure ? { servername: target.literalIp ? undefined : target.hostname } : {}),
  } as http.RequestOptions);
}
