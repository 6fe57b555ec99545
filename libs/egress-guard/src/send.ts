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
 * One request to the vetted address: no redirects followed (a 3xx is an answer), no
 * keep-alive, no decompression. TLS still checks the certificate against the URL's host
 * name, although the socket goes to the address that was vetted. At most `maxExcerptBytes`
 * of the answer are read; then the connection is dropped.
 */
export function sendOnce(input: SendInput): Promise<SendResult> {
  const started = performance.now();
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
    const finish = (result: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(total);
      clearTimeout(connect);
      resolve(result);
    };
    let req: http.ClientRequest | undefined;
    const fail = (reason: NetworkFailure) => {
      finish({ kind: "network_error", reason, durationMs: elapsed() });
      req?.destroy();
    };
    const total = setTimeout(() => fail("timeout"), input.totalTimeoutMs);
    const connect = setTimeout(() => fail("timeout"), input.connectTimeoutMs);
    try {
      req = request(input, secure, pinned, (err) => fail(failureOf(err)));
    } catch (err) {
      // Options Node's client refuses synchronously (they were vetted, so this is rare): an outcome, not a throw.
      fail(failureOf(err));
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

    req.on("socket", (socket) => {
      const connected = () => clearTimeout(connect);
      if (secure) socket.once("secureConnect", connected);
      else socket.once("connect", connected);
    });
    req.on("error", (err) => fail(failureOf(err)));
    req.on("response", (res) => {
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
      fail(failureOf(err));
    }
  });
}

/**
 * The request, over a connection of its own (no keep-alive). Every socket gets an error
 * listener the moment it exists, before Node's client attaches its own: whatever the socket
 * does and whenever, its error is this request's outcome, never an unhandled event.
 */
function request(input: SendInput, secure: boolean, lookup: LookupFunction, onSocketError: (err: Error) => void): http.ClientRequest {
  const { target } = input;
  const open = (options: net.NetConnectOpts & tls.ConnectionOptions) =>
    input.connect ? input.connect(options, secure) : secure ? tls.connect(options) : net.connect(options);
  const agent = new (secure ? https.Agent : http.Agent)({ keepAlive: false });
  agent.createConnection = (options: net.NetConnectOpts & tls.ConnectionOptions) => {
    const socket = open(options);
    socket.on("error", onSocketError);
    return socket;
  };
  return (secure ? https.request : http.request)({
    protocol: target.url.protocol,
    host: target.hostname,
    port: target.port,
    method: input.method,
    path: `${target.url.pathname}${target.url.search}`,
    lookup,
    agent,
    setHost: false,
    ...(secure ? { servername: target.literalIp ? undefined : target.hostname } : {}),
  });
}
