import { ApiError, type ApiClient, type EndpointJson, type EventDetailJson, type EventSummaryJson, type RecordAttemptRequest } from "@whc/api-model";
import { bodyBytes, localRequest, nextAttemptNumber, type LocalRequest } from "./local-request.js";
import type { ResignMode } from "./options.js";
import { pause, patiently, Stopped, type Patience } from "./patience.js";
import type { ListenLine, Reporter } from "./report.js";
import { needsResign, withSignature } from "./resign.js";
import { sendLocal, type SendOutcome } from "./send.js";

/** Between two requests for an event the app did not answer: doubling, at most this. */
export const RETRY_BACKOFF = { initialMs: 500, maxMs: 8000 };

/** What every delivery of one run needs. */
export interface DeliveryContext {
  client: ApiClient;
  endpoint: EndpointJson;
  forwardTo: URL;
  timeoutMs: number;
  retryForMs: number;
  resign: ResignMode;
  patience: Patience;
  report: Reporter;
  /** The last error the app gave (for the heartbeat), undefined once it answers. */
  setLastError(error: string | undefined): void;
}

function attemptOf(url: string, outcome: SendOutcome): RecordAttemptRequest {
  if ("error" in outcome) return { url, error: outcome.error, durationMs: outcome.durationMs };
  return {
    url,
    status: outcome.status,
    durationMs: outcome.durationMs,
    headers: outcome.headers,
    ...(outcome.body.length ? { bodyBase64: outcome.body.toString("base64") } : {}),
  };
}

const isGone = (err: unknown) => ApiError.is(err) && err.status === 404;

/** Re-signing that cannot work for this run (no secret, a key-pair scheme, replay disabled): said once, then off. */
function resignUnavailable(err: unknown): string | undefined {
  if (!ApiError.is(err)) return undefined;
  if (err.code === "validation_failed" && err.details.field === "target_secret") return "the endpoint has no secret to sign with (set one with whc endpoints update --secret)";
  if (err.code === "signing_unsupported") return "its provider signs with a private key the endpoint does not hold";
  if (err.status === 403) return `the API refused it (${err.code})`;
  if (err.code === "conflict") return "the event's body is not stored";
  return undefined;
}

/**
 * One request for the event, with fresh signature headers when the run's --resign says so (for
 * each try: a signature made before a long wait would be stale again).
 */
async function sendOnce(c: DeliveryContext, detail: EventDetailJson, request: LocalRequest, url: string): Promise<{ outcome: SendOutcome; resigned: boolean }> {
  let out = request;
  let resigned = false;
  if (c.resign !== "never" && needsResign(c.resign, detail, Date.now())) {
    try {
      out = withSignature(request, await patiently(() => c.client.events.signature(c.endpoint.id, detail.id, { target_url: url }), c.patience));
      resigned = true;
    } catch (err) {
      const why = resignUnavailable(err);
      if (why === undefined) throw err;
      c.report.warning("resign_unavailable", `events of ${c.endpoint.slug} are sent with their signatures as captured: re-signing is not possible (${why})`);
      c.resign = "never";
    }
  }
  return { outcome: await sendLocal(out, c.timeoutMs), resigned };
}

/**
 * Requests until the app answers (any HTTP status) or `retryForMs` has passed since the first
 * try without one; meanwhile later events wait, so the app sees them in order. Throws Stopped
 * when Ctrl-C ends a wait.
 */
async function sendUntilAnswered(
  c: DeliveryContext,
  detail: EventDetailJson,
  request: LocalRequest,
  url: string,
  delivery: (r: { outcome: SendOutcome; resigned: boolean }, tries: number) => ListenLine,
) {
  const started = Date.now();
  let delay = RETRY_BACKOFF.initialMs;
  for (let tries = 1; ; tries += 1) {
    const sent = await sendOnce(c, detail, request, url);
    if (!("error" in sent.outcome)) return { ...sent, tries, gaveUpAfterMs: undefined };
    c.setLastError(`${sent.outcome.error} (${url})`);
    const left = c.retryForMs - (Date.now() - started);
    if (left <= 0) return { ...sent, tries, gaveUpAfterMs: Date.now() - started };
    if (tries === 1) c.report.retrying(delivery(sent, tries), c.retryForMs);
    await pause(Math.min(delay, left), c.patience.signal);
    delay = Math.min(delay * 2, RETRY_BACKOFF.maxMs);
  }
}

/**
 * Sends one event to the local app and records the answer as its attempt (trigger cli). An
 * event that cannot be sent (deleted, or its body not stored) is skipped with a line. Throws
 * Stopped when Ctrl-C ends a wait (the cursor then stays before the event).
 */
export async function deliver(c: DeliveryContext, e: EventSummaryJson): Promise<void> {
  const { client, endpoint, patience, report } = c;
  const skip = (reason: "deleted" | "body_not_stored" | "body_unreadable", path = "") =>
    report.skipped({ eventId: e.id, eventType: e.canonicalEventType, method: e.method, path, reason });
  let detail: EventDetailJson;
  try {
    detail = await patiently(() => client.events.get(endpoint.id, e.id), patience);
  } catch (err) {
    if (!isGone(err)) throw err;
    return skip("deleted");
  }
  const body = bodyBytes(detail);
  const request = body && localRequest({ forwardTo: c.forwardTo, detail, body, attempt: nextAttemptNumber(detail) });
  if (!body || !request) return skip(detail.decryption === "metadata_only" ? "body_not_stored" : "body_unreadable", detail.path);
  if (detail.truncated) report.note(`${e.id}: its body was stored truncated; the app gets the stored ${body.length} of ${detail.originalSizeBytes} bytes`);
  const url = `${request.origin.origin}${request.path}`;
  const base = { eventId: e.id, receivedAt: e.receivedAt, eventType: e.canonicalEventType, method: e.method, url, path: request.path, attempt: nextAttemptNumber(detail), redacted: detail.redactions !== undefined };
  const delivery = (r: { outcome: SendOutcome; resigned: boolean }, tries: number): ListenLine => ({ ...base, ...r, tries });

  const sent = await sendUntilAnswered(c, detail, request, url, delivery).catch((err: unknown) => {
    if (err instanceof Stopped) report.note(`stopped before the app answered ${e.id}; it is sent again next time`);
    throw err;
  });
  if (!("error" in sent.outcome)) c.setLastError(undefined);
  let attempt: number;
  try {
    attempt = (await patiently(() => client.events.recordAttempt(endpoint.id, e.id, attemptOf(url, sent.outcome)), patience)).n;
  } catch (err) {
    if (err instanceof Stopped) report.note(`the answer to ${e.id} was not recorded; it is sent again next time`);
    if (!isGone(err)) throw err;
    attempt = base.attempt;
  }
  report.delivery({ ...delivery(sent, sent.tries), attempt });
  if (sent.gaveUpAfterMs !== undefined && "error" in sent.outcome) {
    report.skipped({ eventId: e.id, eventType: e.canonicalEventType, method: e.method, path: request.path, reason: "no_answer", error: sent.outcome.error, retriedForMs: sent.gaveUpAfterMs });
  }
}
