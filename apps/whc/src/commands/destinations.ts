import { readFile } from "node:fs/promises";
import { type Command, InvalidArgumentError, Option } from "commander";
import {
  checkShape,
  destinationInput,
  keptDestination,
  type ApiClient,
  type DestinationInput,
  type DestinationViewJson,
  type EndpointJson,
} from "@whc/api-model";
import type { Context } from "../context.js";
import { resolveEndpoint } from "../endpoint-ref.js";
import { CliError } from "../exit-codes.js";
import { table } from "../output.js";

/**
 * `whc endpoints destinations list|add|update|remove|test` (design §17): an endpoint's
 * destinations one at a time. The API replaces the list as a whole (PATCH `destinations`), so
 * each change reads the endpoint, changes one destination and sends them all back, the others
 * under their ids (their target secrets kept); a change made meanwhile by someone else is
 * replaced, as any PATCH replaces.
 */

interface DestinationFlags {
  url?: string;
  name?: string;
  /** JSON or @file.json; false for --no-filter. */
  filter?: string | false;
  /** JavaScript or @file.js; false for --no-transform. */
  transform?: string | false;
  /** The secret, or false for --no-target-secret. */
  targetSecret?: string | false;
  keepPath?: boolean;
  timeoutMs?: number;
  maxAttempts?: number;
  /** JSON or @file.json; false for --no-rate-limit. */
  rateLimit?: string | false;
  /** JSON or @file.json; false for --no-breaker. */
  breaker?: string | false;
  paused?: boolean;
}

function integerArgument(value: string): number {
  if (!/^\d{1,9}$/.test(value)) throw new InvalidArgumentError("a whole number");
  return Number(value);
}

function booleanArgument(value: string): boolean {
  if (value === "true") return true;
  if (value === "false") return false;
  throw new InvalidArgumentError("true or false");
}

/** A flag's value, or the file it names with @. */
async function textOf(flag: string, value: string): Promise<string> {
  if (!value.startsWith("@")) return value;
  try {
    return await readFile(value.slice(1), "utf8");
  } catch (err) {
    throw new CliError(`${flag}: cannot read ${value.slice(1)}: ${(err as Error).message}`, "badInput");
  }
}

async function jsonOf(flag: string, value: string): Promise<unknown> {
  try {
    return JSON.parse(await textOf(flag, value)) as unknown;
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`${flag}: not JSON: ${(err as Error).message}`, "badInput");
  }
}

/** The destination the flags make of `base` (a stored one, or a new one's start). */
async function withFlags(base: DestinationInput, o: DestinationFlags): Promise<DestinationInput> {
  const next: Record<string, unknown> = { ...base };
  const set = (key: string, value: unknown) => {
    if (value === null) delete next[key];
    else next[key] = value;
  };
  if (o.url !== undefined) set("url", o.url);
  if (o.name !== undefined) set("name", o.name);
  if (o.filter !== undefined) set("filter", o.filter === false ? null : await jsonOf("--filter", o.filter));
  if (o.transform !== undefined) set("transform", o.transform === false ? null : await textOf("--transform", o.transform));
  if (o.targetSecret !== undefined) next.targetSecret = o.targetSecret === false ? null : o.targetSecret;
  if (o.keepPath !== undefined) set("keepPath", o.keepPath);
  if (o.timeoutMs !== undefined) set("timeoutMs", o.timeoutMs);
  if (o.maxAttempts !== undefined) set("maxAttempts", o.maxAttempts);
  if (o.rateLimit !== undefined) set("rateLimit", o.rateLimit === false ? null : await jsonOf("--rate-limit", o.rateLimit));
  if (o.breaker !== undefined) set("breaker", o.breaker === false ? null : await jsonOf("--breaker", o.breaker));
  if (o.paused !== undefined) set("paused", o.paused);
  const checked = checkShape(destinationInput, next);
  if (!checked.ok) {
    const { field, message } = checked.problem;
    throw new CliError(`destination ${field ? `field ${field}` : "(the whole value)"}: ${message} (nothing was sent)`, "badInput");
  }
  return next as DestinationInput;
}

function withDestinationOptions(command: Command): Command {
  return command
    .option("--name <name>", "unique within the endpoint (letters, digits, . _ -)")
    .option("--filter <json>", "a MongoDB-style query over the capture (design §17), as JSON or @file.json")
    .option("--transform <code>", "JavaScript defining transform(req), or @file.js")
    .option("--target-secret <secret>", "re-sign what is sent with this secret (write-only)")
    .addOption(new Option("--keep-path <bool>", "append the capture's sub-path and query (default true)").argParser(booleanArgument))
    .addOption(new Option("--timeout-ms <ms>", "deadline of one attempt (default 10000)").argParser(integerArgument))
    .addOption(new Option("--max-attempts <n>", "attempts before giving up (default 6)").argParser(integerArgument))
    .option("--rate-limit <json>", 'e.g. {"perSecond":10,"concurrency":2}: across all replay replicas')
    .option("--breaker <json>", 'e.g. {"failures":5,"probeAfterMs":30000} (the defaults): when to open, when to probe')
    .addOption(new Option("--paused <bool>", "hold this destination's deliveries until false again").argParser(booleanArgument));
}

/** A destination of the endpoint by id or name. */
function findDestination(e: EndpointJson, ref: string): DestinationViewJson {
  const found = (e.destinations ?? []).find((d) => d.id === ref.toLowerCase() || d.name === ref);
  if (!found) throw new CliError(`${e.slug} has no destination with the id or name "${ref}"`, "notFound");
  return found;
}

/** Where a destination's delivery control stands (design §18): its breaker, what it holds, its pause. */
export function breakerSummary(d: DestinationViewJson): string {
  const b = d.breaker;
  const parts: string[] = [b.state === "half_open" ? "half-open (probing)" : b.state];
  if (b.state !== "closed" && b.consecutiveFailures > 0) parts.push(`${b.consecutiveFailures} failures in a row`);
  if (d.paused) parts.push("paused");
  if (b.held > 0) parts.push(`${b.held} held`);
  if (b.nextProbeAt) parts.push(`probe at ${b.nextProbeAt}`);
  return parts.join(", ");
}

/** One line per destination: what it takes, where it goes, and its breaker. */
export function destinationsTable(e: EndpointJson): string {
  const rows = (e.destinations ?? []).map((d) => [
    d.name,
    d.id,
    d.url,
    d.filter ? JSON.stringify(d.filter) : "every capture",
    d.transform ? `${d.transform.length} chars` : "-",
    breakerSummary(d),
    [d.targetSecretSet ? "re-signed" : "", d.rateLimit ? rateLimitText(d.rateLimit) : ""].filter(Boolean).join(", ") || "-",
  ]);
  return table([["NAME", "ID", "URL", "FILTER", "TRANSFORM", "BREAKER", "NOTES"], ...rows]);
}

function rateLimitText(r: NonNullable<DestinationViewJson["rateLimit"]>): string {
  const rate = r.perSecond ? `${r.perSecond}/s` : r.perMinute ? `${r.perMinute}/min` : "";
  return [rate, r.concurrency ? `${r.concurrency} at once` : ""].filter(Boolean).join(", ");
}

/**
 * `pause` and `resume` (design §18): `paused` set on one destination, the others sent back as
 * they are. A paused destination's deliveries are held (nothing is sent) until it is resumed;
 * then they go oldest first, paced.
 */
function pauseCommands(parent: Command, ctx: () => Context): void {
  for (const [verb, paused] of [
    ["pause", true],
    ["resume", false],
  ] as const) {
    parent
      .command(verb)
      .description(
        paused
          ? "hold one destination's deliveries: nothing is sent to it until it is resumed (its deliveries never expire meanwhile)"
          : "let a paused destination's deliveries go again: the held ones drain oldest first, within its rate limit (10 a second without one)",
      )
      .argument("<endpoint>", "its id or slug")
      .argument("<destination>", "its id or name")
      .action(async (ref: string, which: string) => {
        const { out, api } = ctx();
        const client = api();
        const e = await out.busy(paused ? "pausing" : "resuming", async () => {
          const found = await resolveEndpoint(client, ref);
          const target = findDestination(found, which);
          return replaced(
            client,
            found,
            (found.destinations ?? []).map((d) => (d.id === target.id ? { ...keptDestination(d), paused } : keptDestination(d))),
          );
        });
        const d = findDestination(e, which);
        out.result(d, () => `${paused ? "paused" : "resumed"} ${d.name} of ${e.slug}: ${breakerSummary(d)}`);
      });
  }
}

function listCommand(parent: Command, ctx: () => Context): void {
  parent
    .command("list")
    .description("an endpoint's destinations, with their breakers (state, held deliveries, next probe)")
    .argument("<endpoint>", "its id or slug")
    .action(async (ref: string) => {
      const { out, api } = ctx();
      const client = api();
      const e = await out.busy("reading", () => resolveEndpoint(client, ref));
      out.result(e.destinations ?? [], () => (e.destinations?.length ? destinationsTable(e) : `${e.slug} has no destination`));
    });
}

/** `whc destinations list|pause|resume` (design §18): the same as under `whc endpoints destinations`. */
export function destinationControlCommands(program: Command, ctx: () => Context): void {
  const destinations = program.command("destinations").description("a relay endpoint's destinations: list them with their breakers, pause and resume them (design §18)");
  listCommand(destinations, ctx);
  pauseCommands(destinations, ctx);
}

async function replaced(client: ApiClient, e: EndpointJson, destinations: DestinationInput[]): Promise<EndpointJson> {
  return client.endpoints.update(e.id, { destinations });
}

export function destinationCommands(endpoints: Command, ctx: () => Context): void {
  const destinations = endpoints.command("destinations").description("where a relay endpoint's captures go, each with its filter and transform (design §17)");

  listCommand(destinations, ctx);
  pauseCommands(destinations, ctx);

  withDestinationOptions(destinations.command("add"))
    .description("add a destination (the endpoint's others are kept)")
    .argument("<endpoint>", "its id or slug")
    .requiredOption("--url <url>", "where its deliveries go")
    .action(async (ref: string, opts: DestinationFlags) => {
      const { out, api } = ctx();
      const added = await withFlags({ url: opts.url! }, opts);
      const client = api();
      const e = await out.busy("adding", async () => {
        const found = await resolveEndpoint(client, ref);
        return replaced(client, found, [...(found.destinations ?? []).map(keptDestination), added]);
      });
      const made = e.destinations!.at(-1)!;
      out.result(made, () => `added ${made.name} (${made.id}) to ${e.slug}\n${destinationsTable(e)}`);
    });

  withDestinationOptions(destinations.command("update"))
    .description("change one destination; only the options given change")
    .argument("<endpoint>", "its id or slug")
    .argument("<destination>", "its id or name")
    .option("--url <url>", "where its deliveries go")
    .option("--no-filter", "take every capture")
    .option("--no-transform", "send captures as they came")
    .option("--no-target-secret", "stop re-signing")
    .option("--no-rate-limit", "remove the rate limit")
    .option("--no-breaker", "remove the breaker settings")
    .action(async (ref: string, which: string, opts: DestinationFlags) => {
      const { out, api } = ctx();
      const client = api();
      const e = await out.busy("updating", async () => {
        const found = await resolveEndpoint(client, ref);
        const target = findDestination(found, which);
        const list = await Promise.all((found.destinations ?? []).map(async (d) => (d.id === target.id ? withFlags(keptDestination(d), opts) : keptDestination(d))));
        return replaced(client, found, list);
      });
      out.result(e.destinations ?? [], () => `updated ${which} of ${e.slug}\n${destinationsTable(e)}`);
    });

  destinations
    .command("remove")
    .description("remove one destination (a relay endpoint keeps at least one)")
    .argument("<endpoint>", "its id or slug")
    .argument("<destination>", "its id or name")
    .action(async (ref: string, which: string) => {
      const { out, api } = ctx();
      const client = api();
      const e = await out.busy("removing", async () => {
        const found = await resolveEndpoint(client, ref);
        const target = findDestination(found, which);
        const rest = (found.destinations ?? []).filter((d) => d.id !== target.id).map(keptDestination);
        return client.endpoints.update(found.id, rest.length > 0 ? { destinations: rest } : { destinations: null });
      });
      out.result(e.destinations ?? [], () => `removed ${which} from ${e.slug}${e.destinations?.length ? `\n${destinationsTable(e)}` : ""}`);
    });

  destinations
    .command("test")
    .description("try a filter and transform on a stored event: whether it matches, and what would be sent (nothing is sent or saved)")
    .argument("<endpoint>", "its id or slug")
    .argument("<event>", "the event's id")
    .option("--destination <destination>", "try this destination's own filter and transform (by id or name)")
    .option("--filter <json>", "a filter to try, as JSON or @file.json")
    .option("--transform <code>", "a transform to try, as JavaScript or @file.js")
    .action(async (ref: string, eventId: string, opts: { destination?: string; filter?: string; transform?: string }) => {
      const { out, api } = ctx();
      const client = api();
      const result = await out.busy("testing", async () => {
        const found = await resolveEndpoint(client, ref);
        const own = opts.destination ? findDestination(found, opts.destination) : undefined;
        const filter = opts.filter !== undefined ? await jsonOf("--filter", opts.filter) : own?.filter;
        const transform = opts.transform !== undefined ? await textOf("--transform", opts.transform) : own?.transform;
        return client.endpoints.testDestination(found.id, {
          destination: { ...(filter ? { filter: filter as Record<string, unknown> } : {}), ...(transform ? { transform } : {}) },
          eventId,
        });
      });
      out.result(result, () => {
        if (!result.matched) return "no match: the filter leaves this event out";
        if (result.error) return `matched; the transform failed (${result.durationMs} ms): ${result.error}`;
        if (!result.request) return `matched; the transform answered null: the delivery would be skipped (${result.durationMs} ms)`;
        return `matched; would send (${result.durationMs} ms):\n${JSON.stringify(result.request, null, 2)}`;
      });
    });
}
