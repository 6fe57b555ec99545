import type { ServerResponse } from "node:http";
import type { Client } from "@connectrpc/connect";
import type { AttemptResult, ReplayService } from "@whc/contracts";
import { ATTEMPT_ERRORS, EVENT_ID_HEADER, HOP_BY_HOP_HEADERS, forwardSettings, withUntrustedContentHeaders } from "@whc/api-model";
import { AppError } from "@whc/errors";

/** What ingest asks of the replay service. */
export type ReplayForwarder = Pick<Client<typeof ReplayService>, "forwardEvent">;

/** Beyond the attempt's own deadline: replay's lease, guard and catalog calls around the send. */
export const PROXY_CALL_MARGIN_MS = 2000;

/**
 * The longest one proxy call may take (the largest `timeoutMs` an endpoint may set, plus the
 * margin): the transport ingest calls replay through must allow at least this.
 */
export const PROXY_CALL_MAX_MS = (forwardSettings.shape.timeoutMs.unwrap().maxValue ?? 60_000) + PROXY_CALL_MARGIN_MS;

/**
 * The deadline of the transport ingest calls replay through: a proxy call lasts up to its
 * forward timeout plus the margin, longer than other internal calls may.
 */
export function replayDeadlineMs(rpcTimeoutMs: number): number {
  return Math.max(rpcTimeoutMs, PROXY_CALL_MAX_MS);
}

/** A destination's answer as the sender gets it. */
export interface ProxyAnswer {
  status: number;
  /** Names as the destination sent them, repeats kept. */
  headers: [string, string][];
  body: Uint8Array;
  /** Set when the sender is told the forward failed: the reason in the answer. */
  failure?: string;
}

/**
 * Headers of one hop, never passed on (RFC 9110 §7.6.1), and Content-Length, which is
 * computed again for the body as sent.
 */
const HOP_BY_HOP: ReadonlySet<string> = new Set([...HOP_BY_HOP_HEADERS, "proxy-authenticate", "content-length"]);

/** Statuses whose answers carry no content (RFC 9110 §15.3.5, §15.4.5). */
const NO_CONTENT: ReadonlySet<number> = new Set([204, 304]);

const KNOWN_FAILURES: ReadonlySet<string> = new Set(ATTEMPT_ERRORS);

/** `{"error":"forward_failed","reason":CODE}` (design §11): 504 when the destination timed out, else 502. */
export function forwardFailed(reason: string): ProxyAnswer {
  const body = new TextEncoder().encode(JSON.stringify({ error: "forward_failed", reason }));
  return { status: reason === "timeout" ? 504 : 502, headers: [["content-type", "application/json"]], body, failure: reason };
}

/**
 * Why a ForwardEvent call itself failed, as the sender is told: its own deadline is a timeout,
 * a refusal replay threw rather than recorded keeps its reason, anything else means the
 * replay service could not be reached or could not forward.
 */
export function callFailureReason(err: unknown): string {
  if (!AppError.is(err)) return "service_unavailable";
  if (err.reason === "timeout" || KNOWN_FAILURES.has(err.reason)) return err.reason;
  return "service_unavailable";
}

/**
 * The sender's answer to a proxied capture, from the attempt replay made. A capture the
 * destination's transform skipped (design §17) went nowhere, and is answered as stored: ingest's
 * own 200 with the event's id.
 */
export function proxyAnswerOf(attempt: AttemptResult | undefined, eventId = ""): ProxyAnswer {
  if (!attempt) return forwardFailed("service_unavailable");
  if (attempt.state === "skipped" && !attempt.error && attempt.status === 0) {
    return { status: 200, headers: [["content-type", "application/json"]], body: new TextEncoder().encode(JSON.stringify({ ok: true, id: eventId })) };
  }
  if (attempt.error) return forwardFailed(attempt.error);
  if (attempt.status < 200 || attempt.status > 599) return forwardFailed("protocol_error");
  // A body cut at the inbound limit would reach the sender as if it were whole.
  if (attempt.bodyTruncated) return forwardFailed("response_too_large");
  const pairs = attempt.headers.map((h) => [h.name, h.value] as [string, string]);
  return { status: attempt.status, headers: passedHeaders(pairs), body: attempt.body };
}

/** The destination's headers minus hop-by-hop ones, including those its Connection header names. */
export function passedHeaders(pairs: readonly [string, string][]): [string, string][] {
  const named = new Set(
    pairs
      .filter(([name]) => name.toLowerCase() === "connection")
      .flatMap(([, value]) => value.split(","))
      .map((token) => token.trim().toLowerCase())
      .filter((token) => token.length > 0),
  );
  return pairs.filter(([name]) => {
    const lower = name.toLowerCase();
    return !HOP_BY_HOP.has(lower) && !named.has(lower);
  });
}

/**
 * Writes the answer with its own Content-Length. A header Node refuses to send (the
 * destination's, not ours to repair) turns the answer into 502 protocol_error.
 */
export function sendProxyAnswer(res: ServerResponse, answer: ProxyAnswer, eventId: string): ProxyAnswer {
  const bodyless = NO_CONTENT.has(answer.status);
  const framing = bodyless ? [] : ["content-length", String(answer.body.length)];
  try {
    // The destination's bytes, served from the webhook origin: never as a page of it (design §14).
    res.writeHead(answer.status, [...withUntrustedContentHeaders(answer.headers).flat(), EVENT_ID_HEADER, eventId, ...framing]);
  } catch {
    if (res.headersSent) return answer;
    return sendProxyAnswer(res, forwardFailed("protocol_error"), eventId);
  }
  res.end(bodyless ? undefined : answer.body);
  return answer;
}
