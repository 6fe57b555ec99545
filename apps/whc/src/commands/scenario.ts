import { readFileSync, statSync } from "node:fs";
import { type Command, InvalidArgumentError, Option } from "commander";
import { SCENARIO_LIMITS, scenario, type Scenario } from "@whc/api-model";
import { PROVIDER_NAMES, type Provider } from "@whc/signatures";
import type { Context } from "../context.js";
import { resolveEndpoint } from "../endpoint-ref.js";
import { filterQuery, withEventFilters, type FilterOptions } from "../event-filters.js";
import { CliError } from "../exit-codes.js";
import { recordScenario } from "../scenario/record.js";
import { playScenario, type PlayedEvent } from "../scenario/play.js";

interface PlayOptions {
  to?: string;
  endpoint?: string;
  speed: number;
  resign?: boolean;
  secret?: string;
  timeout: number;
}

function speedArgument(value: string): number {
  if (value === "max") return Infinity;
  const n = Number(value);
  if (!/^\d{1,6}(\.\d{1,3})?$/.test(value) || n <= 0) throw new InvalidArgumentError("max, or a factor above 0 (2 plays twice as fast, 0.5 half as fast)");
  return n;
}

/** The scenario file (- for stdin), checked against the format of docs/scenario.schema.json. */
export function readScenario(file: string): Scenario {
  const path = file === "-" ? 0 : file;
  let text: string;
  try {
    if (path !== 0 && statSync(path).size > SCENARIO_LIMITS.fileBytes) throw new CliError(`${file} is over ${SCENARIO_LIMITS.fileBytes / 1024 / 1024} MiB`);
    text = readFileSync(path, "utf8");
  } catch (err) {
    if (CliError.is(err)) throw err;
    throw new CliError(`cannot read ${file}: ${(err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new CliError(`${file} is not JSON: ${(err as Error).message}`);
  }
  const parsed = scenario.safeParse(json);
  if (!parsed.success) {
    const first = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join(".") || "(file)"}: ${i.message}`);
    throw new CliError(`${file} is not a scenario (docs/scenario.schema.json):\n  ${first.join("\n  ")}`);
  }
  return parsed.data;
}

function httpUrl(value: string, option: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CliError(`${option} must be an http(s) URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new CliError(`${option} must be an http(s) URL`);
  return url;
}

async function targetOf(c: Context, o: PlayOptions): Promise<URL> {
  if ((o.to === undefined) === (o.endpoint === undefined)) throw new CliError("give one of --to URL or --endpoint E");
  if (o.to !== undefined) return httpUrl(o.to, "--to");
  return httpUrl((await resolveEndpoint(c.api(), o.endpoint!)).webhookUrl, "the endpoint's webhookUrl");
}

function resignOf(s: Scenario, o: PlayOptions): { provider: Provider; secret: Uint8Array } | undefined {
  if (!o.resign) {
    if (o.secret !== undefined) throw new CliError("--secret is for --resign");
    return undefined;
  }
  if (o.secret === undefined) throw new CliError("--resign needs --secret: the secret your app verifies with");
  if (!(PROVIDER_NAMES as readonly string[]).includes(s.provider)) throw new CliError(`the scenario's provider ${s.provider} is not one whc can sign as`);
  return { provider: s.provider as Provider, secret: Buffer.from(o.secret) };
}

function playedLine(e: PlayedEvent, total: number): string {
  return [String(e.status ?? e.error), `${e.durationMs} ms`.padStart(8), `event ${e.index}/${total}`, e.resigned ? "(re-signed)" : ""].join("  ").trimEnd();
}

async function play(c: Context, file: string, o: PlayOptions): Promise<void> {
  const s = readScenario(file);
  const resign = resignOf(s, o);
  const target = await targetOf(c, o);
  const results = await playScenario(s, { target, speed: o.speed, resign, timeoutMs: o.timeout * 1000 }, (e) =>
    c.out.result(e, () => playedLine(e, s.events.length)),
  );
  const failed = results.filter((r) => !r.ok).length;
  if (failed > 0) throw new CliError(`${failed} of ${results.length} events were not answered 2xx`);
}

/** `whc scenario record|play` (design §19): captured traffic as a fixture, sent again in order. */
export function scenarioCommands(program: Command, ctx: () => Context): void {
  const scenarios = program.command("scenario").description("captured events as a file (docs/scenario.schema.json), played again against any URL");

  withEventFilters(
    scenarios
      .command("record")
      .description("write the endpoint's matching events, oldest first, with their gaps and exact bytes, as a scenario on stdout")
      .argument("<endpoint>", "its id or slug"),
  ).action(async (ref: string, opts: FilterOptions) => {
    const c = ctx();
    const client = c.api();
    const endpoint = await resolveEndpoint(client, ref);
    const recorded = await recordScenario(client, endpoint, filterQuery(opts), (m) => process.stderr.write(`${m}\n`));
    process.stdout.write(`${JSON.stringify(recorded, null, 2)}\n`);
    process.stderr.write(`recorded ${recorded.events.length} events of ${endpoint.slug}\n`);
  });

  scenarios
    .command("play")
    .description("send a scenario's requests in order with the recorded gaps (divided by --speed); exits 1 if any answer is not 2xx")
    .argument("<file>", "the scenario (- reads stdin)")
    .addOption(new Option("--to <url>", "send to this URL (each request's recorded sub-path and query are appended)"))
    .addOption(new Option("--endpoint <endpoint>", "send to this endpoint's webhook URL (id or slug)"))
    .addOption(new Option("--speed <n|max>", "divide the recorded gaps by n; max: no waiting").default(1).argParser(speedArgument))
    .addOption(new Option("--resign", "sign each request afresh, now, with the scenario provider's scheme"))
    .addOption(new Option("--secret <secret>", "with --resign: the secret the receiver verifies with"))
    .addOption(new Option("--timeout <seconds>", "how long to wait for each answer").default(30).argParser(Number))
    .addHelpText(
      "after",
      "\nExamples:\n  whc scenario record billing --from 2h > checkout.json\n" +
        "  whc scenario play checkout.json --to http://localhost:3000/webhooks --speed max --resign --secret whsec_...",
    )
    .action(async (file: string, o: PlayOptions) => play(ctx(), file, o));
}
