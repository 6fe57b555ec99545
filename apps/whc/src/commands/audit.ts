import { type Command, InvalidArgumentError, Option } from "commander";
import { AUDIT_ACTIONS, type AuditEntryJson, type ListAuditQueryText } from "@whc/api-model";
import type { Context } from "../context.js";
import { resolveEndpoint } from "../endpoint-ref.js";
import { cursorArgument, cursorText, timeArgument } from "../event-filters.js";
import { oneOf, table } from "../output.js";
import { CliError } from "../exit-codes.js";

interface AuditOptions {
  action?: string;
  key?: string;
  endpoint?: string;
  event?: string;
  from?: string;
  to?: string;
  before?: { at: string; id: string };
  limit: number;
  all?: boolean;
}

function limitArgument(value: string): number {
  if (!/^\d{1,3}$/.test(value) || Number(value) < 1 || Number(value) > 200) throw new InvalidArgumentError("1 to 200");
  return Number(value);
}

function entryCells(e: AuditEntryJson): string[] {
  return [e.at, e.action, `${e.keyPrefix}…`, e.remoteIp, e.endpointId ?? "", e.eventId ?? "", Object.keys(e.details).length ? JSON.stringify(e.details) : ""];
}

/** `whc audit`: the audit log (design §15), newest first; `--all` follows every page. */
export function auditCommand(program: Command, ctx: () => Context): void {
  program
    .command("audit")
    .description("who did what: the audit log, newest first (needs scope audit:read)")
    .addOption(new Option("--action <action>", `only this action: ${oneOf(AUDIT_ACTIONS)}`).choices(AUDIT_ACTIONS))
    .option("--key <id>", "only what this API key did (its id, as whc keys list shows it)")
    .option("--endpoint <endpoint>", "only entries about this endpoint (id or slug)")
    .option("--event <id>", "only entries about this event (its history: reads, exports, replays, redeliveries); needs --endpoint")
    .addOption(new Option("--from <time>", "at or after: ISO 8601, or 30m, 2h, 7d ago").argParser((v) => timeArgument(v)))
    .addOption(new Option("--to <time>", "before: ISO 8601, or 30m, 2h, 7d ago").argParser((v) => timeArgument(v)))
    .addOption(new Option("--before <at,id>", "only entries older than this cursor").argParser(cursorArgument))
    .addOption(new Option("--limit <n>", "entries per page, 1-200").argParser(limitArgument).default(50))
    .option("--all", "every page, one entry per line (NDJSON with --json)")
    .action(async (opts: AuditOptions) => {
      const { out, api } = ctx();
      const client = api();
      if (opts.event && !opts.endpoint) throw new CliError("--event needs --endpoint (the event's endpoint)");
      const endpointId = opts.endpoint ? (await resolveEndpoint(client, opts.endpoint)).id : undefined;
      let query: ListAuditQueryText = {
        limit: String(opts.limit),
        ...(opts.action ? { action: opts.action as ListAuditQueryText["action"] } : {}),
        ...(opts.key ? { keyId: opts.key } : {}),
        ...(endpointId ? { endpointId } : {}),
        ...(opts.event ? { eventId: opts.event } : {}),
        ...(opts.from ? { from: opts.from } : {}),
        ...(opts.to ? { to: opts.to } : {}),
        ...(opts.before ? { before: opts.before.at, beforeId: opts.before.id } : {}),
      };
      if (!opts.all) {
        const page = await out.busy("reading the audit log", () => client.audit.list(query));
        out.result(page, () => (page.items.length ? table([["AT", "ACTION", "KEY", "FROM", "ENDPOINT", "EVENT", "DETAILS"], ...page.items.map(entryCells)]) : "no entries"));
        if (!out.json && page.nextBefore && page.nextBeforeId) process.stderr.write(`older: --before ${cursorText({ at: page.nextBefore, id: page.nextBeforeId })} (or --all)\n`);
        return;
      }
      for (;;) {
        const page = await client.audit.list(query);
        for (const e of page.items) out.result(e, () => entryCells(e).filter(Boolean).join("  "));
        if (!page.nextBefore || !page.nextBeforeId) return;
        query = { ...query, before: page.nextBefore, beforeId: page.nextBeforeId };
      }
    });
}
