import { type Command, InvalidArgumentError, Option } from "commander";
import { ApiError, cursorAfter, type ApiClient, type Cursor, type EndpointJson, type EventDetailJson, type EventSummaryJson, type RecordAttemptRequest } from "@whc/api-model";
import type { Context } from "../context.js";
import { resolveEndpoint } from "../endpoint-ref.js";
import { cursorFile, stateDir, type CursorFile } from "../listen/cursor-file.js";
import { bodyBytes, localRequest, nextAttemptNumber } from "../listen/local-request.js";
import { patiently, Stopped, type Patience } from "../listen/patience.js";
import { deliveryJson, deliveryLine } from "../listen/report.js";
import { sendLocal, type SendOutcome } from "../listen/send.js";

interface ListenOptions {
  forwardTo: URL;
  events?: string[];
  fromNow?: boolean;
  timeout: number;
}

/** One run of `whc listen`: what every delivery needs. */
interface Session {
  ctx: Context;
  client: ApiClient;
  endpoint: EndpointJson;
  options: ListenOptions;
  cursor: CursorFile;
  patience: Patience;
  /** A line for people on stderr (none with --json, where every line of output is a delivery). */
  note(text: string): void;
}

function forwardToArgument(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError("an http or https URL, e.g. http://localhost:3000/webhooks");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new InvalidArgumentError("an http or https URL");
  return url;
}

function eventsArgument(value: string): string[] {
  const types = value.split(",").map((t) => t.trim()).filter(Boolean);
  if (!types.length) throw new InvalidArgumentError("one or more event types, comma-separated");
  return types;
}

function secondsArgument(value: string): number {
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 3600) throw new InvalidArgumentError("seconds, more than 0 and at most 3600");
  return Math.round(seconds * 1000);
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

/**
 * Sends one event to the local app and records the answer as its attempt (trigger cli). An
 * event that cannot be sent (deleted, or its body not stored) is skipped with a note. Throws
 * Stopped when Ctrl-C ends a wait for the API.
 */
async function deliver(s: Session, e: EventSummaryJson): Promise<void> {
  const { client, endpoint, patience, note } = s;
  let detail: EventDetailJson;
  try {
    detail = await patiently(() => client.events.get(endpoint.id, e.id), patience);
  } catch (err) {
    if (!isGone(err)) throw err;
    return note(`skipped ${e.id}: it was deleted`);
  }
  const body = bodyBytes(detail);
  if (!body) return note(`skipped ${e.id}: ${detail.decryption === "metadata_only" ? "its body was not stored (metadata only)" : "its body cannot be decrypted"}`);
  if (detail.truncated) note(`${e.id}: its body was stored truncated; the app gets the stored ${body.length} of ${detail.originalSizeBytes} bytes`);
  const request = localRequest({ forwardTo: s.options.forwardTo, detail, body, attempt: nextAttemptNumber(detail) });
  const outcome = await sendLocal(request, s.options.timeout);
  const url = `${request.origin.origin}${request.path}`;
  let attempt: number;
  try {
    attempt = (await patiently(() => client.events.recordAttempt(endpoint.id, e.id, attemptOf(url, outcome)), patience)).n;
  } catch (err) {
    if (err instanceof Stopped) note(`the answer to ${e.id} was not recorded; it is sent again next time`);
    if (!isGone(err)) throw err;
    attempt = nextAttemptNumber(detail);
  }
  const delivery = { eventId: e.id, receivedAt: e.receivedAt, eventType: e.canonicalEventType, method: e.method, url, path: request.path, attempt, outcome };
  s.ctx.out.result(deliveryJson(delivery), () => deliveryLine(delivery));
}

/** Where this run starts: the saved cursor, or now (then saved, so a later run misses nothing from here). */
async function startingCursor(s: Session): Promise<{ cursor: Cursor; saved: boolean }> {
  const saved = s.options.fromNow ? undefined : await s.cursor.read();
  if (saved) return { cursor: saved, saved: true };
  const newest = await patiently(() => s.client.events.list(s.endpoint.id, { limit: "1" }), s.patience);
  const now = cursorAfter(newest);
  await s.cursor.write(now);
  return { cursor: now, saved: false };
}

/** Ctrl-C (or SIGTERM) once: stop after the delivery under way; twice: at once. */
function stopOnSignals(): { signal: AbortSignal; release(): void } {
  const stop = new AbortController();
  const onSignal = () => {
    if (stop.signal.aborted) process.exit(130);
    stop.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return {
    signal: stop.signal,
    release() {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    },
  };
}

/**
 * Catches up on the events after the saved cursor, oldest first, then follows new captures
 * live (the client's follow() with the `wait` long poll does both, as it pages with the
 * cursor); each event is sent once and the cursor saved after it.
 */
async function listen(ctx: Context, ref: string, options: ListenOptions): Promise<void> {
  const client = ctx.api();
  const stop = stopOnSignals();
  const note = (text: string) => {
    if (!ctx.out.json) process.stderr.write(`${text}\n`);
  };
  const patience: Patience = { signal: stop.signal, onRetry: (err, delayMs) => note(`${err.message}; retrying in ${Math.ceil(delayMs / 1000)} s`) };
  try {
    const endpoint = await patiently(() => resolveEndpoint(client, ref), patience);
    const s: Session = { ctx, client, endpoint, options, cursor: cursorFile(stateDir(ctx.env), ctx.apiUrl, endpoint.id), patience, note };
    const { cursor, saved } = await startingCursor(s);
    note(
      `forwarding ${endpoint.slug} to ${options.forwardTo.href}: ${saved ? `every capture after ${cursor.at}` : "new captures"}, then live (Ctrl-C to stop)`,
    );
    const wanted = options.events ? new Set(options.events) : undefined;
    const captures = client.follow(endpoint.id, { after: cursor, signal: stop.signal, onRetry: patience.onRetry });
    for await (const e of captures) {
      if (!wanted || wanted.has(e.canonicalEventType ?? "")) await deliver(s, e);
      await s.cursor.write({ at: e.receivedAt, id: e.id });
      if (stop.signal.aborted) break;
    }
  } catch (err) {
    if (!(err instanceof Stopped)) throw err;
  } finally {
    stop.release();
  }
}

/** `whc listen <endpoint> --forward-to URL`. */
export function listenCommand(program: Command, ctx: () => Context): void {
  program
    .command("listen")
    .description("forward an endpoint's captures to a local app: those since the last run first, then live; each answer is recorded")
    .argument("<endpoint>", "its id or slug")
    .requiredOption("--forward-to <url>", "where to send each capture; its sub-path and query are appended", forwardToArgument)
    .option("--events <types>", "only these canonical event types, comma-separated (the others are skipped)", eventsArgument)
    .option("--from-now", "ignore the saved cursor: only captures from now on")
    .addOption(new Option("--timeout <seconds>", "deadline of each request to the local app").argParser(secondsArgument).default(30_000, "30"))
    .action(async (ref: string, opts: ListenOptions) => listen(ctx(), ref, opts));
}
