import { randomUUID } from "node:crypto";
import { type Command, InvalidArgumentError, Option } from "commander";
import { ApiError, cursorAfter, LISTENER_HEARTBEAT_S, type ApiClient, type Cursor, type EndpointJson } from "@whc/api-model";
import type { Context } from "../context.js";
import { resolveEndpoint } from "../endpoint-ref.js";
import { CliError, exitCodeOf } from "../exit-codes.js";
import { cursorFile, stateDir, type CursorFile } from "../listen/cursor-file.js";
import { deliver, type DeliveryContext } from "../listen/deliver.js";
import { startHeartbeat, type ListenerState } from "../listen/heartbeat.js";
import { durationArgument, durationText, resignArgument, resignModeOf, secondsToMs, sinceArgument, type ResignMode, type Since } from "../listen/options.js";
import { createOutageWatch, type OutageWatch } from "../listen/outage.js";
import { patiently, Stopped, type Patience } from "../listen/patience.js";
import { createReporter, type Reporter } from "../listen/report.js";

interface ListenOptions {
  forwardTo: URL;
  events?: string[];
  fromNow?: boolean;
  since?: Since;
  timeout: number;
  retryFor: number;
  resign?: ResignMode | boolean;
  heartbeatInterval: number;
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

/** The largest UUID below `id` (ids compare as lower-case hex): a cursor just before that event. */
export function idBefore(id: string): string {
  const hex = id.replaceAll("-", "").toLowerCase();
  const n = BigInt(`0x${hex}`);
  const before = (n === 0n ? 0n : n - 1n).toString(16).padStart(32, "0");
  return `${before.slice(0, 8)}-${before.slice(8, 12)}-${before.slice(12, 16)}-${before.slice(16, 20)}-${before.slice(20)}`;
}

/** Strictly before every event received at or after `at`. */
function cursorBefore(atMs: number): Cursor {
  return { at: new Date(atMs - 1).toISOString(), id: "ffffffff-ffff-ffff-ffff-ffffffffffff" };
}

/** Where `--since` starts: before the first event at or after the time, or just before the event named. */
async function sinceCursor(client: ApiClient, endpoint: EndpointJson, since: Since, patience: Patience): Promise<Cursor> {
  if ("at" in since) return cursorBefore(Date.parse(since.at));
  try {
    const event = await patiently(() => client.events.get(endpoint.id, since.eventId), patience);
    return { at: event.receivedAt, id: idBefore(event.id) };
  } catch (err) {
    if (ApiError.is(err) && err.status === 404) throw new CliError(`--since: no event ${since.eventId} in ${endpoint.slug}`, "notFound");
    throw err;
  }
}

/** Where this run starts: --since, the saved cursor, or now (then saved, so a later run misses nothing from here). */
async function startingCursor(
  client: ApiClient,
  endpoint: EndpointJson,
  file: CursorFile,
  options: ListenOptions,
  patience: Patience,
): Promise<{ cursor: Cursor; from: string }> {
  if (options.since) {
    const since = options.since;
    const cursor = await sinceCursor(client, endpoint, since, patience);
    return { cursor, from: "at" in since ? `every capture since ${since.at}` : `event ${since.eventId} and every capture after it` };
  }
  const saved = options.fromNow ? undefined : await file.read();
  if (saved) return { cursor: saved, from: `every capture after ${saved.at}` };
  const now = cursorAfter(await patiently(() => client.events.list(endpoint.id, { limit: "1" }), patience));
  await file.write(now);
  return { cursor: now, from: "new captures" };
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

/** A refusal of the long poll that ends the run, said for what it means here. */
function fatalOf(err: unknown, endpoint: EndpointJson | undefined): unknown {
  if (!ApiError.is(err) || !endpoint || err.status !== 404) return err;
  return new CliError(`the endpoint ${endpoint.slug} (${endpoint.id}) no longer exists (404 not_found)`, "notFound");
}

/** The --json line of the error that ends the run: the API's own refusal where there is one. */
function reportFatal(report: Reporter, cause: unknown, thrown: unknown = cause): void {
  const exitCode = exitCodeOf(thrown);
  if (ApiError.is(cause)) report.fatal({ status: cause.status || null, code: cause.code, message: cause.message, requestId: cause.requestId || null, exitCode });
  else report.fatal({ status: null, code: CliError.is(cause) ? cause.kind : "error", message: (cause as Error).message ?? String(cause), requestId: null, exitCode });
}

function patienceOf(signal: AbortSignal, outage: OutageWatch, report: Reporter): Patience {
  return {
    signal,
    onRetry(err, delayMs) {
      if (err.throttledForMs !== undefined) report.note(`the API key is throttled (429); waiting ${durationText(delayMs)}`);
      else outage.failed(err);
    },
    onAnswer: () => outage.answered(),
  };
}

/**
 * Catches up on the events after the starting cursor, oldest first, then follows new captures
 * live (the client's follow() with the `wait` long poll does both, as it pages with the
 * cursor); each event is sent once, in order, and the cursor saved after it. A running listen
 * heartbeats as one of the endpoint's listeners.
 */
async function listen(ctx: Context, ref: string, options: ListenOptions): Promise<void> {
  const report = createReporter(ctx.out.json);
  let client: ApiClient;
  try {
    client = ctx.api();
  } catch (err) {
    reportFatal(report, err);
    throw err;
  }
  const stop = stopOnSignals();
  const outage = createOutageWatch(ctx.apiUrl, report);
  const patience = patienceOf(stop.signal, outage, report);
  const state: ListenerState = { cursor: undefined, lastError: undefined };
  let endpoint: EndpointJson | undefined;
  let heartbeat: { stop(): Promise<void> } | undefined;
  try {
    endpoint = await patiently(() => resolveEndpoint(client, ref), patience);
    const file = cursorFile(stateDir(ctx.env), ctx.apiUrl, endpoint.id);
    const { cursor, from } = await startingCursor(client, endpoint, file, options, patience);
    state.cursor = cursor;
    heartbeat = startHeartbeat({ client, endpointId: endpoint.id, listenerId: randomUUID(), intervalMs: options.heartbeatInterval, state: () => state, outage, report });
    report.note(`forwarding ${endpoint.slug} to ${options.forwardTo.href}: ${from}, then live (Ctrl-C to stop)`);
    const c: DeliveryContext = {
      client,
      endpoint,
      forwardTo: options.forwardTo,
      timeoutMs: options.timeout,
      retryForMs: options.retryFor,
      resign: resignModeOf(options.resign),
      patience,
      report,
      setLastError: (error) => (state.lastError = error),
    };
    const wanted = options.events ? new Set(options.events) : undefined;
    const captures = client.follow(endpoint.id, { after: cursor, signal: stop.signal, onRetry: patience.onRetry, onRecovered: () => outage.answered() });
    for await (const e of captures) {
      if (!wanted || wanted.has(e.canonicalEventType ?? "")) await deliver(c, e);
      state.cursor = { at: e.receivedAt, id: e.id };
      await file.write(state.cursor);
      if (stop.signal.aborted) break;
    }
  } catch (err) {
    if (err instanceof Stopped) return;
    const fatal = fatalOf(err, endpoint);
    reportFatal(report, err, fatal);
    throw fatal;
  } finally {
    stop.release();
    await heartbeat?.stop();
  }
}

/** `whc listen <endpoint> --forward-to URL`. */
export function listenCommand(program: Command, ctx: () => Context): void {
  program
    .command("listen")
    .description(
      "forward an endpoint's captures to a local app, in order: those since the last run first, then live; each answer is recorded. " +
        "An event the app does not answer at all (refused, reset, timed out) is tried again for --retry-for, and later events wait behind it; " +
        "signatures too old for their provider's tolerance are made afresh (--resign)",
    )
    .argument("<endpoint>", "its id or slug")
    .requiredOption("--forward-to <url>", "where to send each capture; its sub-path and query are appended", forwardToArgument)
    .option("--events <types>", "only these canonical event types, comma-separated (the others are skipped)", eventsArgument)
    .option("--from-now", "ignore the saved cursor: only captures from now on")
    .option("--since <when>", "start earlier than the saved cursor: a duration ago (2h), an ISO time, or an event id (that event included)", sinceArgument)
    .addOption(
      new Option("--resign [when]", "re-sign events with the endpoint's secret: stale (default: older than the provider's tolerance), always or never").argParser(
        resignArgument,
      ),
    )
    .option("--no-resign", "send every signature as captured (the same as --resign=never)")
    .addOption(
      new Option("--retry-for <duration>", "how long to try an event the app does not answer before moving past it (0: not at all)").argParser(durationArgument).default(300_000, "5m"),
    )
    .addOption(new Option("--timeout <seconds>", "deadline of each request to the local app").argParser(secondsToMs(0.001, 3600)).default(30_000, "30"))
    .addOption(new Option("--heartbeat-interval <seconds>").argParser(secondsToMs(0.05, 3600)).default(LISTENER_HEARTBEAT_S * 1000).hideHelp())
    .action(async (ref: string, opts: ListenOptions) => {
      if (opts.since && opts.fromNow) throw new CliError("--since and --from-now cannot go together", "badInput");
      return listen(ctx(), ref, opts);
    });
}
