import http from "node:http";
import https from "node:https";
import { performance } from "node:perf_hooks";
import type { ATTEMPT_ERRORS } from "@whc/api-model";
import type { LocalRequest } from "./local-request.js";

export type SendError = (typeof ATTEMPT_ERRORS)[number];

/** The answer's first bytes that are kept (and recorded): 64 KiB, as the API keeps. */
export const EXCERPT_BYTES = 64 * 1024;

export type SendOutcome =
  | { status: number; headers: Record<string, string[]>; body: Buffer; bodyTruncated: boolean; durationMs: number }
  | { error: SendError; durationMs: number };

function errorOf(err: unknown): SendError {
  const code = String((err as { code?: string }).code ?? "");
  const message = String((err as { message?: string }).message ?? "");
  if (code === "ECONNREFUSED") return "connection_refused";
  if (code === "ETIMEDOUT" || code === "WHC_TIMEOUT") return "timeout";
  if (code === "EHOSTUNREACH" || code === "ENETUNREACH" || code === "EADDRNOTAVAIL") return "host_unreachable";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return "dns_failure";
  if (code.startsWith("HPE_")) return "protocol_error";
  if (code.startsWith("ERR_SSL") || code.includes("CERT") || code === "EPROTO" || /ssl|tls|certificate/i.test(message)) return "tls_error";
  return "connection_reset";
}

/** Response headers as the API records them: name -> values, names as sent. */
function headersOf(raw: readonly string[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) (out[raw[i]!] ??= []).push(raw[i + 1]!);
  return out;
}

/**
 * One request to the local app: the method, target, headers and body exactly as given (the
 * body is written as bytes in one piece, so Node adds Host and its Content-Length), no redirects
 * followed, no decompression. At most EXCERPT_BYTES of the answer are read, then the
 * connection is dropped. Never throws: a failure is an outcome.
 */
export function sendLocal(req: LocalRequest, timeoutMs: number): Promise<SendOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const request = req.origin.protocol === "https:" ? https.request : http.request;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: SendOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const out = request({
      protocol: req.origin.protocol,
      hostname: req.origin.hostname.replace(/^\[|\]$/g, ""),
      port: req.origin.port || undefined,
      method: req.method,
      path: req.path,
      agent: false,
    });
    const timer = setTimeout(() => {
      finish({ error: "timeout", durationMs: elapsed() });
      out.destroy();
    }, timeoutMs);
    for (const [name, value] of req.headers) {
      const prior = out.getHeader(name);
      out.setHeader(name, prior === undefined ? value : [...(Array.isArray(prior) ? prior : [String(prior)]), value]);
    }
    out.on("error", (err) => finish({ error: errorOf(err), durationMs: elapsed() }));
    out.on("response", (res) => {
      const chunks: Buffer[] = [];
      let kept = 0;
      let truncated = false;
      const done = () =>
        finish({ status: res.statusCode ?? 0, headers: headersOf(res.rawHeaders), body: Buffer.concat(chunks), bodyTruncated: truncated, durationMs: elapsed() });
      res.on("data", (chunk: Buffer) => {
        const room = EXCERPT_BYTES - kept;
        chunks.push(chunk.subarray(0, room));
        kept += Math.min(room, chunk.length);
        if (chunk.length > room) {
          truncated = true;
          done();
          res.destroy();
        }
      });
      res.on("end", done);
      // An answer cut short still has its status and what came of its body.
      res.on("error", done);
    });
    out.end(req.body);
  });
}
