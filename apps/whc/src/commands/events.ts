import type { Command } from "commander";
import { cursorAfter, REPLAY_MODES, type EventSummaryJson, type ReplayRequest } from "@whc/api-model";
import type { Context } from "../context.js";
import { oneOf } from "../output.js";


function eventLine(e: EventSummaryJson): string {
  return [e.receivedAt, e.method.padEnd(6), String(e.responseCode), e.verification.padEnd(10), e.canonicalEventType ?? "-", `${e.originalSizeBytes} B`, e.id].join("  ");
}


/** Prints the last `lines` events, oldest first, then every new capture until SIGINT. */
async function tail({ out, api }: Context, endpointId: string, lines: number): Promise<void> {
  const client = api();
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

/** `whc events tail|curl|replay`. */
export function eventCommands(program: Command, ctx: () => Context): void {
  const events = program.command("events").description("captured events");

  events
    .command("tail")
    .description("print the last events, then follow new captures live")
    .argument("<endpointId>")
    .option("-n, --lines <n>", "how many recent events to show first", "10")
    .action(async (endpointId: string, opts: { lines: string }) => tail(ctx(), endpointId, Number(opts.lines)));

  events
    .command("curl")
    .argument("<endpointId>")
    .argument("<eventId>")
    .option("--unmasked", "show secret header values")
    .action(async (endpointId: string, eventId: string, opts: { unmasked?: boolean }) => {
      const { out, api } = ctx();
      const res = await api().events.curl(endpointId, eventId, { unmasked: opts.unmasked });
      out.result(res, () => res.command);
    });

  events
    .command("replay")
    .argument("<endpointId>")
    .argument("<eventId>")
    .requiredOption("--to <url>", "the target URL")
    .option("--mode <mode>", oneOf(REPLAY_MODES))
    .option("--secret <secret>", "re-sign with this secret")
    .action(async (endpointId: string, eventId: string, opts: { to: string; mode?: string; secret?: string }) => {
      const { out, api } = ctx();
      const client = api();
      const res = await out.busy(`replaying to ${opts.to}`, () =>
        client.events.replay(endpointId, eventId, {
          target_url: opts.to,
          // Passed through as typed: the API refuses an unknown mode with its own message.
          ...(opts.mode ? { mode: opts.mode as ReplayRequest["mode"] } : {}),
          ...(opts.secret ? { target_secret: opts.secret } : {}),
        }),
      );
      out.result(res, () =>
        res.result === "network_error"
          ? `network error: ${res.network_failure_reason} after ${res.duration_ms} ms`
          : `${res.result}: HTTP ${res.target_status} in ${res.duration_ms} ms (${res.mode})`,
      );
    });
}
