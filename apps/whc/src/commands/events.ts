import { createWriteStream } from "node:fs";
import { type Command, InvalidArgumentError, Option } from "commander";
import { cursorAfter, REPLAY_MODES, type ApiClient, type Cursor, type EventDiffJson, type EventListJson, type EventSummaryJson, type ReplayRequest } from "@whc/api-model";
import type { Context } from "../context.js";
import { resolveEndpoint } from "../endpoint-ref.js";
import { cursorText, filterQuery, withEventFilters, type FilterOptions } from "../event-filters.js";
import { describeEvent } from "../views.js";
import { CliError } from "../exit-codes.js";
import { writeExport } from "../export-writer.js";
import { BACKOFF } from "../listen/patience.js";
import { bodyBytes } from "../listen/local-request.js";
import { oneOf, table } from "../output.js";

const EVENT_COLUMNS = ["RECEIVED", "METHOD", "CODE", "VERIFICATION", "TYPE", "SIZE", "ID"];

function eventCells(e: EventSummaryJson): string[] {
  const id = e.duplicateOf ? `${e.id} (duplicate of ${e.duplicateOf})` : e.id;
  return [e.receivedAt, e.method, String(e.responseCode), e.verification, e.canonicalEventType ?? "-", `${e.originalSizeBytes} B`, id];
}

/** One event on one line, for output that streams (tail, list --all): fixed widths up to the type. */
function eventLine(e: EventSummaryJson): string {
  const [at, method, code, verification, ...rest] = eventCells(e);
  return [at, method!.padEnd(6), code, verification!.padEnd(10), ...rest].join("  ");
}

/** Prints the last `lines` events, oldest first, then every new capture until SIGINT. */
async function tail({ out, api }: Context, ref: string, lines: number): Promise<void> {
  const client = api();
  const endpointId = (await resolveEndpoint(client, ref)).id;
  const first = await client.events.list(endpointId, { limit: String(Math.min(Math.max(lines, 1), 200)) });
  const show = (e: EventSummaryJson) => out.result(e, () => eventLine(e));
  if (lines > 0) for (const e of [...first.items].reverse()) show(e);

  const stop = new AbortController();
  const onSigint = () => stop.abort();
  process.once("SIGINT", onSigint);
  if (!out.json) process.stderr.write(`following ${endpointId} (Ctrl-C to stop)\n`);
  try {
    const captures = client.follow(endpointId, {
      after: cursorAfter(first),
      signal: stop.signal,
      // stderr is for people: with --json every line of output is an event.
      onRetry: (err, delayMs) => {
        if (!out.json) process.stderr.write(`${err.message}; retrying in ${Math.ceil(delayMs / 1000)} s\n`);
      },
    });
    for await (const e of captures) show(e);
  } finally {
    process.off("SIGINT", onSigint);
  }
}

interface ListOptions extends FilterOptions {
  limit: number;
  all?: boolean;
}

function limitArgument(value: string): number {
  const n = Number(value);
  if (!/^\d{1,3}$/.test(value) || n < 1 || n > 200) throw new InvalidArgumentError("a page size from 1 to 200");
  return n;
}

/**
 * `--all`: every page. Without `--after`, newest first, paging older with nextBefore; with it,
 * oldest first from the cursor, paging newer with nextAfter. One summary per line (NDJSON with
 * --json), printed page by page, so any number of events takes the memory of one page.
 */
async function listAll(ctx: Context, client: ApiClient, endpointId: string, opts: ListOptions): Promise<void> {
  const forward = opts.after !== undefined;
  let query = { ...filterQuery(opts), limit: String(opts.limit) };
  for (;;) {
    const page = await client.events.list(endpointId, query);
    const items = forward ? [...page.items].reverse() : page.items;
    for (const e of items) ctx.out.result(e, () => eventLine(e));
    if (forward) {
      if (page.items.length < opts.limit || !page.nextAfter || !page.nextAfterId) return;
      query = { ...query, after: page.nextAfter, afterId: page.nextAfterId };
    } else {
      if (!page.nextBefore || !page.nextBeforeId) return;
      query = { ...query, before: page.nextBefore, beforeId: page.nextBeforeId };
    }
  }
}

/** One page: the API's JSON as it is with --json, else a table and, on stderr, how to get the next one. */
function printPage(ctx: Context, page: EventListJson, opts: ListOptions): void {
  ctx.out.result(page, () => (page.items.length ? table([EVENT_COLUMNS, ...page.items.map(eventCells)]) : "no events"));
  if (ctx.out.json) return;
  const excluded = page.searchExcludedMetadataOnlyCount;
  if (excluded) process.stderr.write(`${excluded} metadata-only events were not searched (no body stored)\n`);
  if (opts.after === undefined && page.nextBefore && page.nextBeforeId) {
    process.stderr.write(`older: --before ${cursorText({ at: page.nextBefore, id: page.nextBeforeId })} (or --all)\n`);
  } else if (opts.after !== undefined && page.items.length === opts.limit && page.nextAfter && page.nextAfterId) {
    process.stderr.write(`newer: --after ${cursorText({ at: page.nextAfter, id: page.nextAfterId })} (or --all)\n`);
  }
}

async function list(ctx: Context, ref: string, opts: ListOptions): Promise<void> {
  const client = ctx.api();
  const endpointId = (await resolveEndpoint(client, ref)).id;
  if (opts.all) return listAll(ctx, client, endpointId, opts);
  const page = await ctx.out.busy("listing", () => client.events.list(endpointId, { ...filterQuery(opts), limit: String(opts.limit) }));
  printPage(ctx, page, opts);
}

/** `whc events get`: the metadata and headers, the detail's JSON, or the body's exact bytes. */
async function get(ctx: Context, ref: string, eventId: string, opts: { body?: boolean }): Promise<void> {
  const client = ctx.api();
  const endpointId = (await resolveEndpoint(client, ref)).id;
  const detail = await ctx.out.busy("reading", () => client.events.get(endpointId, eventId));
  if (!opts.body) return ctx.out.result(detail, () => describeEvent(detail));
  const bytes = bodyBytes(detail);
  if (bytes) {
    process.stdout.write(bytes);
    return;
  }
  if (detail.decryption === "failed") throw new CliError(`the body of ${eventId} cannot be decrypted (its master key left the key ring, or it was altered)`);
  throw new CliError(`${eventId} has no stored body (captured as metadata only)`, "notFound");
}

/** How long an export waits for a byte before asking again, and how often in a row it asks in vain. */
export const EXPORT_DEFAULTS = { stallSeconds: 60, retries: 5 };

interface ExportFlags extends FilterOptions {
  output?: string;
  stallTimeout: number;
  retries: number;
}

async function exportEvents(ctx: Context, ref: string, opts: ExportFlags): Promise<void> {
  const client = ctx.api();
  const endpoint = await resolveEndpoint(client, ref);
  const query = filterQuery(opts);
  const open = (after: Cursor | undefined, signal: AbortSignal) =>
    client.events.export(endpoint.id, { ...query, ...(after ? { after: after.at, afterId: after.id } : {}) }, signal);
  // The first answer before the file: a refusal leaves nothing behind.
  const abort = new AbortController();
  const first = { body: await open(undefined, abort.signal), abort };
  const toFile = opts.output !== undefined && opts.output !== "-";
  const outcome = await writeExport(first, open, toFile ? createWriteStream(opts.output!) : process.stdout, {
    end: toFile,
    stallMs: opts.stallTimeout * 1000,
    retries: opts.retries,
    backoff: BACKOFF,
    // Said as the tail says its retries: on stderr, not with --json.
    onResume: ({ count }, reason, delayMs) => {
      if (!ctx.out.json) process.stderr.write(`the export was cut short after ${count} events (${reason}); resuming after the last of them in ${Math.ceil(delayMs / 1000)} s\n`);
    },
  });
  // The reader stopped reading (`| head`): what it wanted was written.
  if ((outcome.error as { code?: string } | undefined)?.code === "EPIPE") return;
  if (outcome.error) {
    const resume = outcome.last ? `; resume with: whc events export ${ref} --after ${cursorText(outcome.last)} (and the same filters)` : "";
    throw new CliError(`the export was cut short after ${outcome.count} events (${outcome.error.message})${resume}`, "unavailable");
  }
  if (!ctx.out.json) process.stderr.write(`exported ${outcome.count} events of ${endpoint.slug}\n`);
}

/** Seconds, whole or not, above zero: `--stall-timeout`. */
function secondsArgument(value: string): number {
  if (!/^\d{1,6}(\.\d{1,3})?$/.test(value) || Number(value) <= 0) throw new InvalidArgumentError("seconds above zero, e.g. 60 or 0.5");
  return Number(value);
}

function countArgument(value: string): number {
  if (!/^\d{1,3}$/.test(value)) throw new InvalidArgumentError("a whole number from 0 to 999");
  return Number(value);
}

/** `--edit`: the replay request's `edits` object as JSON; the API checks its fields. */
function editsArgument(value: string): ReplayRequest["edits"] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new InvalidArgumentError("a JSON object: {\"headers\":{\"set\":{...},\"remove\":[...]}, \"body\"|\"bodyBase64\"|\"jsonMergePatch\"|\"jsonPatch\": ...}");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new InvalidArgumentError("a JSON object");
  return parsed as ReplayRequest["edits"];
}

const shownValue = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));

/** A diff as a person reads it: one line a change, `-` what the first event had, `+` what the second has. */
function diffText(d: EventDiffJson): string {
  if (d.same) return `same (body: ${d.bodyKind})`;
  const lines = d.changes.map((c) => {
    if (c.op === "add") return `+ ${c.path}: ${shownValue(c.to)}`;
    if (c.op === "remove") return `- ${c.path}: ${shownValue(c.from)}`;
    return `~ ${c.path}: ${shownValue(c.from)} -> ${shownValue(c.to)}`;
  });
  return [...lines, `${d.changes.length} changes (body: ${d.bodyKind})${d.truncated ? ", more not listed" : ""}`].join("\n");
}

/** `whc events tail|list|get|delete|export|curl|replay|diff`. */
export function eventCommands(program: Command, ctx: () => Context): void {
  const events = program.command("events").description("captured events");

  events
    .command("tail")
    .description("print the last events, then follow new captures live")
    .argument("<endpoint>", "its id or slug")
    .option("-n, --lines <n>", "how many recent events to show first", "10")
    .action(async (ref: string, opts: { lines: string }) => tail(ctx(), ref, Number(opts.lines)));

  withEventFilters(
    events
      .command("list")
      .description("list events, newest first (oldest first with --after --all); --json prints the API's page, or one summary per line with --all")
      .argument("<endpoint>", "its id or slug"),
  )
    .addOption(new Option("--limit <n>", "page size, 1-200").argParser(limitArgument).default(50))
    .option("--all", "every page, following the cursors")
    .action(async (ref: string, opts: ListOptions) => list(ctx(), ref, opts));

  events
    .command("get")
    .description("one event: its metadata and headers, the whole detail with --json, or the exact body bytes with --body")
    .argument("<endpoint>", "its id or slug")
    .argument("<eventId>")
    .option("--body", "write the body's bytes, exactly as captured, to stdout")
    .action(async (ref: string, eventId: string, opts: { body?: boolean }) => get(ctx(), ref, eventId, opts));

  events
    .command("delete")
    .description("delete one event (succeeds when it is already gone)")
    .argument("<endpoint>", "its id or slug")
    .argument("<eventId>")
    .action(async (ref: string, eventId: string) => {
      const { out, api } = ctx();
      const client = api();
      const endpoint = await resolveEndpoint(client, ref);
      await out.busy("deleting", () => client.events.delete(endpoint.id, eventId));
      out.result({ id: eventId, deleted: true }, () => `deleted ${eventId} of ${endpoint.slug}`);
    });

  withEventFilters(
    events
      .command("export")
      .description("every matching event's full detail (bodies decrypted), one JSON object per line, oldest first: for backups and moving data")
      .argument("<endpoint>", "its id or slug"),
  )
    .option("-o, --output <file>", "write to this file instead of stdout")
    .addOption(
      new Option("--stall-timeout <seconds>", "no data for this long counts as the answer breaking off").default(EXPORT_DEFAULTS.stallSeconds).argParser(secondsArgument),
    )
    .addOption(
      new Option("--retries <n>", "times in a row to resume, after the last event written, an answer that broke off without a new event; 0: never")
        .default(EXPORT_DEFAULTS.retries)
        .argParser(countArgument),
    )
    .action(async (ref: string, opts: ExportFlags) => exportEvents(ctx(), ref, opts));

  events
    .command("curl")
    .argument("<endpoint>", "its id or slug")
    .argument("<eventId>")
    .option("--unmasked", "show secret header values")
    .action(async (ref: string, eventId: string, opts: { unmasked?: boolean }) => {
      const { out, api } = ctx();
      const client = api();
      const res = await client.events.curl((await resolveEndpoint(client, ref)).id, eventId, { unmasked: opts.unmasked });
      out.result(res, () => res.command);
    });

  events
    .command("diff")
    .description("what changed from one event to another (of any endpoint of the account): method, path, query, headers, body")
    .argument("<endpoint>", "the first event's endpoint: its id or slug")
    .argument("<eventId>", "the first event (from)")
    .argument("<withEventId>", "the second event (to)")
    .option("--ignore <paths>", "comma-separated dotted paths to leave out, e.g. headers.date,body.created")
    .action(async (ref: string, eventId: string, withId: string, opts: { ignore?: string }) => {
      const { out, api } = ctx();
      const client = api();
      const endpointId = (await resolveEndpoint(client, ref)).id;
      const d = await out.busy("comparing", () => client.events.diff(endpointId, eventId, { with: withId, ...(opts.ignore ? { ignore: opts.ignore } : {}) }));
      out.result(d, () => diffText(d));
    });

  events
    .command("replay")
    .argument("<endpoint>", "its id or slug")
    .argument("<eventId>")
    .requiredOption("--to <url>", "the target URL")
    .option("--mode <mode>", oneOf(REPLAY_MODES))
    .option("--secret <secret>", "re-sign with this secret")
    .addOption(
      new Option("--edit <json>", 'change the request first, e.g. \'{"jsonMergePatch":{"data":{"object":{"amount":700}}}}\' (docs/api.md); with --secret the edited bytes are signed').argParser(
        editsArgument,
      ),
    )
    .action(async (ref: string, eventId: string, opts: { to: string; mode?: string; secret?: string; edit?: ReplayRequest["edits"] }) => {
      const { out, api } = ctx();
      const client = api();
      const endpointId = (await resolveEndpoint(client, ref)).id;
      const res = await out.busy(`replaying to ${opts.to}`, () =>
        client.events.replay(endpointId, eventId, {
          target_url: opts.to,
          // Passed through as typed: the API refuses an unknown mode with its own message.
          ...(opts.mode ? { mode: opts.mode as ReplayRequest["mode"] } : {}),
          ...(opts.secret ? { target_secret: opts.secret } : {}),
          ...(opts.edit ? { edits: opts.edit } : {}),
        }),
      );
      out.result(res, () =>
        res.result === "network_error"
          ? `network error: ${res.network_failure_reason} after ${res.duration_ms} ms`
          : `${res.result}: HTTP ${res.target_status} in ${res.duration_ms} ms (${res.mode}${res.edited ? ", edited" : ""})`,
      );
    });
}
