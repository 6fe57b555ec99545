import type { SendOutcome } from "./send.js";
import { durationText } from "./options.js";

/** One event handed to the local app, as `whc listen` prints it (a line, not a stored delivery: ADR 0014). */
export interface ListenLine {
  eventId: string;
  receivedAt: string;
  eventType: string | undefined;
  method: string;
  /** Where it was sent: the local app's origin and `path`. */
  url: string;
  /** The request target sent, as sent. */
  path: string;
  /** The attempt number the API gave it. */
  attempt: number;
  /** Sent with fresh signature headers (`--resign`). */
  resigned: boolean;
  /** Requests made to the local app for it (more than 1 after no answer). */
  tries: number;
  /** Stored redacted (design §16): the app got the redacted bytes, not what the sender sent. */
  redacted: boolean;
  outcome: SendOutcome;
}

/** What ends a run: the API's refusal (status, code, message, request id) or the CLI's own, and the exit code. */
export interface Fatal {
  status: number | null;
  code: string;
  message: string;
  requestId: string | null;
  exitCode: number;
}

/** An event the cursor moves past without the app having answered it. */
export interface Skip {
  eventId: string;
  eventType: string | undefined;
  method: string;
  path: string;
  reason: "no_answer" | "deleted" | "body_not_stored" | "body_unreadable";
  /** For no_answer: the last error, and how long it was tried. */
  error?: string;
  retriedForMs?: number;
}

/**
 * What `whc listen` prints. For people: deliveries and skips on stdout, one line each with the
 * event id, and everything else on stderr. With --json every line, deliveries and errors alike,
 * is one JSON object on stdout with a `type`.
 */
export interface Reporter {
  delivery(d: ListenLine): void;
  /** The first request for an event got no answer: it is tried again, later events wait. */
  retrying(d: ListenLine, retryForMs: number): void;
  skipped(s: Skip): void;
  /** The API cannot be reached at `url` (said once per outage). */
  unreachable(url: string, status: number, code: string, message: string): void;
  reachable(url: string, afterMs: number): void;
  /** Something that changes what this run does, said once (re-signing off, not registered). */
  warning(code: string, text: string): void;
  /** The error that ends the run; the CLI's error line on stderr follows for people. */
  fatal(f: Fatal): void;
  /** For people only. */
  note(text: string): void;
}

/** `<-- 200 POST /hooks/ci invoice.paid 12 ms [eventId]`, or `<-- ERR connection_refused POST ...`. */
export function deliveryLine(d: ListenLine): string {
  const answer = "error" in d.outcome ? `ERR ${d.outcome.error}` : String(d.outcome.status);
  const how = [d.resigned ? "re-signed" : "", d.tries > 1 ? `try ${d.tries}` : "", d.redacted ? "body redacted" : ""].filter(Boolean).join(", ");
  return `<-- ${answer} ${d.method} ${d.path} ${d.eventType ?? "-"} ${d.outcome.durationMs} ms${how ? ` (${how})` : ""} [${d.eventId}]`;
}

/** The `--json` line of a delivery. */
export function deliveryJson(d: ListenLine) {
  return {
    type: "delivery",
    eventId: d.eventId,
    receivedAt: d.receivedAt,
    eventType: d.eventType ?? null,
    method: d.method,
    url: d.url,
    attempt: d.attempt,
    status: "error" in d.outcome ? null : d.outcome.status,
    error: "error" in d.outcome ? d.outcome.error : null,
    durationMs: d.outcome.durationMs,
    resigned: d.resigned,
    tries: d.tries,
    // As a replay says it (design §16): what the app got is not byte-identical to what was sent.
    warnings: d.redacted ? [{ code: "body_redacted" }] : [],
  };
}

const SKIP_WHY: Record<Skip["reason"], string> = {
  no_answer: "the app did not answer",
  deleted: "it was deleted",
  body_not_stored: "its body was not stored (metadata only)",
  body_unreadable: "its body cannot be decrypted",
};

export function skipLine(s: Skip): string {
  const why = s.reason === "no_answer" ? `no answer for ${durationText(s.retriedForMs ?? 0)} (${s.error}); the cursor moves past it` : SKIP_WHY[s.reason];
  return `--- skipped ${s.method} ${s.path} ${s.eventType ?? "-"} [${s.eventId}]: ${why}`;
}

function write(stream: NodeJS.WriteStream, line: string): void {
  stream.write(`${line}\n`);
}

export function createReporter(json: boolean): Reporter {
  const out = (value: Record<string, unknown>) => write(process.stdout, JSON.stringify(value));
  if (json) {
    return {
      delivery: (d) => out(deliveryJson(d)),
      retrying: (d, retryForMs) => out({ type: "retrying", eventId: d.eventId, error: "error" in d.outcome ? d.outcome.error : null, retryForMs }),
      skipped: (s) => out({ type: "skipped", ...s, eventType: s.eventType ?? null }),
      unreachable: (url, status, code, message) => out({ type: "unreachable", url, status, error: code, message }),
      reachable: (url, afterMs) => out({ type: "reachable", url, afterMs }),
      warning: (code, text) => out({ type: "warning", code, message: text }),
      fatal: (f) => out({ type: "error", status: f.status, error: f.code, message: f.message, requestId: f.requestId, exitCode: f.exitCode }),
      note: () => undefined,
    };
  }
  const err = (line: string) => write(process.stderr, line);
  return {
    delivery: (d) => write(process.stdout, deliveryLine(d)),
    retrying: (d, retryForMs) =>
      err(`${d.method} ${d.path} [${d.eventId}]: no answer (${"error" in d.outcome ? d.outcome.error : "?"}); trying again for up to ${durationText(retryForMs)}, later events wait`),
    skipped: (s) => write(process.stdout, skipLine(s)),
    unreachable: (url, status, code, message) =>
      err(`the API at ${url} ${status === 0 ? `cannot be reached (${message})` : `answers ${status} ${code}`}; trying again until it answers (Ctrl-C to stop)`),
    reachable: (url, afterMs) => err(`the API at ${url} answers again (after ${durationText(afterMs)})`),
    warning: (_code, text) => err(`warning: ${text}`),
    fatal: () => undefined,
    note: err,
  };
}
