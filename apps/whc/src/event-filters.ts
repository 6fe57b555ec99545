import { type Command, InvalidArgumentError, Option } from "commander";
import { DELIVERY_STATES, VERIFICATIONS, type Cursor, type ExportEventsQueryText, type RedeliveryFilterJson } from "@whc/api-model";
import { oneOf } from "./output.js";

/** The list's filters, as `whc events list` and `whc events export` both take them. */
export interface FilterOptions {
  type?: string;
  provider?: string;
  responseCode?: number;
  verification?: string;
  from?: string;
  to?: string;
  forwardState?: string;
  /** true: only drifted events (`--drift`); false: only the others (`--no-drift`). */
  drift?: boolean;
  destination?: string;
  /** true: only duplicates (`--duplicate`); false: only the others (`--no-duplicate`). */
  duplicate?: boolean;
  search?: string;
  before?: Cursor;
  after?: Cursor;
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** An ISO 8601 time, or how long ago (`30m`, `2h`, `7d`), as the API's date-time. */
export function timeArgument(value: string, now = Date.now()): string {
  const ago = /^(\d{1,6})([smhd])$/.exec(value);
  if (ago) return new Date(now - Number(ago[1]) * UNIT_MS[ago[2]!]!).toISOString();
  const ms = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(ms)) {
    throw new InvalidArgumentError("an ISO 8601 time (2026-01-31T12:00:00Z) or a duration ago (30m, 2h, 7d)");
  }
  return new Date(ms).toISOString();
}

/** A cursor as the list prints it: `receivedAt,id`. */
export function cursorArgument(value: string): Cursor {
  const [at, id, ...rest] = value.split(",");
  if (!at || !id || rest.length > 0 || Number.isNaN(Date.parse(at))) {
    throw new InvalidArgumentError("receivedAt,id of an event, e.g. 2026-01-31T12:00:00.000Z,0190e5a4-...");
  }
  return { at, id };
}

export const cursorText = (c: { at: string; id: string }) => `${c.at},${c.id}`;

function responseCodeArgument(value: string): number {
  if (!/^\d{3}$/.test(value)) throw new InvalidArgumentError("an HTTP status, e.g. 500");
  return Number(value);
}

/** Adds the list's filters but search to a command: what `whc redeliver` takes too. */
export function withFilterOptions(command: Command): Command {
  return command
    .option("-t, --type <eventType>", "only this canonical event type (e.g. invoice.paid)")
    .option("--provider <provider>", "only captures detected as this provider (e.g. stripe)")
    .addOption(new Option("--response-code <status>", "only captures answered with this status").argParser(responseCodeArgument))
    .addOption(new Option("--verification <result>", "only this signature verification result").choices(VERIFICATIONS))
    .addOption(new Option("--from <time>", "received at or after: ISO 8601, or 30m, 2h, 7d ago").argParser((v) => timeArgument(v)))
    .addOption(new Option("--to <time>", "received before: ISO 8601, or 30m, 2h, 7d ago").argParser((v) => timeArgument(v)))
    .addOption(new Option("--forward-state <state>", `only this delivery state (of all its deliveries together): ${oneOf([...DELIVERY_STATES, "none"])}`).choices([...DELIVERY_STATES, "none"]))
    .option("--destination <id>", "only events with a delivery to this destination (its id: whc endpoints destinations list)")
    .option("--drift", "only events whose JSON body drifted from the endpoint's learned schema of its type")
    .option("--no-drift", "only events whose body did not drift")
    .option("--duplicate", "only duplicates: repeats of a key the endpoint deduplicates on (duplicateOf)")
    .option("--no-duplicate", "only events that are no duplicate");
}

/** Adds the filter and cursor options to a command. */
export function withEventFilters(command: Command): Command {
  return withFilterOptions(command)
    .option("-q, --search <words>", "only bodies holding every word (case-insensitive)")
    .addOption(new Option("--before <receivedAt,id>", "only events older than this cursor").argParser(cursorArgument))
    .addOption(new Option("--after <receivedAt,id>", "only events newer than this cursor").argParser(cursorArgument));
}

/** The query text of the filters and cursors given. */
export function filterQuery(o: FilterOptions): ExportEventsQueryText {
  return {
    ...(o.type !== undefined ? { eventType: o.type } : {}),
    ...(o.provider !== undefined ? { provider: o.provider } : {}),
    ...(o.responseCode !== undefined ? { responseCode: String(o.responseCode) } : {}),
    ...(o.verification !== undefined ? { status: o.verification as ExportEventsQueryText["status"] } : {}),
    ...(o.from !== undefined ? { from: o.from } : {}),
    ...(o.to !== undefined ? { to: o.to } : {}),
    ...(o.forwardState !== undefined ? { forwardState: o.forwardState as ExportEventsQueryText["forwardState"] } : {}),
    ...(o.drift !== undefined ? { schemaDrift: o.drift ? ("true" as const) : ("false" as const) } : {}),
    ...(o.destination !== undefined ? { destinationId: o.destination } : {}),
    ...(o.duplicate !== undefined ? { duplicate: o.duplicate ? ("true" as const) : ("false" as const) } : {}),
    ...(o.search !== undefined ? { search: o.search } : {}),
    ...(o.before ? { before: o.before.at, beforeId: o.before.id } : {}),
    ...(o.after ? { after: o.after.at, afterId: o.after.id } : {}),
  };
}

/** The filters given, as bulk redelivery's JSON filter (design §18): the list's names, typed values. */
export function redeliveryFilterOf(o: FilterOptions): RedeliveryFilterJson {
  return {
    ...(o.type !== undefined ? { eventType: o.type } : {}),
    ...(o.provider !== undefined ? { provider: o.provider } : {}),
    ...(o.responseCode !== undefined ? { responseCode: o.responseCode } : {}),
    ...(o.verification !== undefined ? { status: o.verification as RedeliveryFilterJson["status"] } : {}),
    ...(o.from !== undefined ? { from: o.from } : {}),
    ...(o.to !== undefined ? { to: o.to } : {}),
    ...(o.forwardState !== undefined ? { forwardState: o.forwardState as RedeliveryFilterJson["forwardState"] } : {}),
    ...(o.drift !== undefined ? { schemaDrift: o.drift } : {}),
    ...(o.destination !== undefined ? { destinationId: o.destination } : {}),
  };
}
