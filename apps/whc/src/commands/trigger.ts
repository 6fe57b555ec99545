import { type Command, Option } from "commander";
import { buildTrigger, PROVIDER_NAMES, providerCatalog, type JsonValue, type Provider, type TriggerRequest } from "@whc/signatures";
import type { Context } from "../context.js";
import { resolveEndpoint } from "../endpoint-ref.js";
import { CliError } from "../exit-codes.js";
import { oneOf, table } from "../output.js";

interface TriggerOptions {
  set: [string, JsonValue][];
  list?: boolean;
  to?: string;
  provider?: string;
  secret?: string;
  timeout: number;
}

/**
 * `--set k=v`: the value is JSON when it reads as JSON (`500`, `true`, `"500"`, `{"a":1}`), else
 * the text as it is, so `--set data.object.currency=eur` needs no quotes.
 */
function collectSet(value: string, previous: [string, JsonValue][]): [string, JsonValue][] {
  const eq = value.indexOf("=");
  if (eq <= 0) throw new CliError(`--set takes path=value, not ${JSON.stringify(value)}`);
  const text = value.slice(eq + 1);
  let parsed: JsonValue;
  try {
    parsed = JSON.parse(text) as JsonValue;
  } catch {
    parsed = text;
  }
  return [...previous, [value.slice(0, eq), parsed]];
}

function providerOf(name: string | undefined): Provider {
  if (name === undefined) throw new CliError("--to needs --provider");
  if (!(PROVIDER_NAMES as readonly string[]).includes(name)) throw new CliError(`--provider must be ${oneOf(PROVIDER_NAMES)}`);
  return name as Provider;
}

/** `--list`: every provider's sample types, or one provider's. */
function list({ out }: Context, provider: string | undefined): void {
  const chosen = provider === undefined ? providerCatalog() : providerCatalog().filter((p) => p.name === providerOf(provider));
  const rows = chosen.filter((p) => p.sampleEventTypes.length > 0).map((p) => ({ provider: p.name, eventTypes: p.sampleEventTypes }));
  out.result(rows, () => table([["PROVIDER", "EVENT TYPES"], ...rows.map((r) => [r.provider, r.eventTypes.join(", ")])]));
}

/** Why a sample could not be built, in the words of the command line. */
function refusal(provider: Provider, built: Exclude<ReturnType<typeof buildTrigger>, { ok: true }>): CliError {
  switch (built.reason) {
    case "no_samples":
      return new CliError(`${provider} has no sample events: pick the provider your app expects`);
    case "unknown_event_type":
      return new CliError(`${provider} has no sample of that event type; it has: ${built.known.join(", ")}`);
    case "bad_set":
      return new CliError(`--set ${built.refused.path}: ${built.refused.detail}`);
    case "cannot_sign":
      return new CliError(`the secret cannot sign as ${provider}`);
  }
}

/** `--to URL`: builds and signs the sample here and sends it straight to the URL (the user's own app). */
async function sendLocally({ out }: Context, eventType: string, o: TriggerOptions): Promise<void> {
  const provider = providerOf(o.provider);
  let url: URL;
  try {
    url = new URL(o.to!);
  } catch {
    throw new CliError("--to must be an http(s) URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new CliError("--to must be an http(s) URL");
  const built = buildTrigger({ provider, eventType, set: Object.fromEntries(o.set), secret: o.secret === undefined ? undefined : Buffer.from(o.secret), url: url.href });
  if (!built.ok) throw refusal(provider, built);
  const request: TriggerRequest = built.request;
  let res: Response;
  try {
    res = await fetch(url, { method: request.method, headers: request.headers.map(([n, v]) => [n, v]), body: request.body, redirect: "manual", signal: AbortSignal.timeout(o.timeout * 1000) });
  } catch (err) {
    throw new CliError(`${url.href} did not answer: ${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message}`, "unavailable");
  }
  const body = await res.text();
  out.result({ status: res.status, body }, () => `${res.status} ${res.statusText}${body ? `\n${body.slice(0, 2000)}` : ""}`);
  if (res.status < 200 || res.status > 299) throw new CliError(`${url.href} answered ${res.status}`, "refused");
}

export function triggerCommand(program: Command, ctx: () => Context): void {
  program
    .command("trigger")
    .description(
      "send a provider's sample event, signed as the provider signs: to an endpoint (through the API, with its secret), " +
        "or with --to straight to a URL (your app), signed here with --secret",
    )
    .argument("[endpoint]", "the endpoint's id or slug (not with --to)")
    .argument("[eventType]", "one of the provider's sample types (whc trigger --list)")
    .addOption(new Option("--set <path=value>", "override a field: dotted JSON path or form field; repeatable").default([]).argParser(collectSet))
    .addOption(new Option("--list", "print the sample event types (of --provider, else of every provider)"))
    .addOption(new Option("--to <url>", "send straight to this URL instead of an endpoint"))
    .addOption(new Option("--provider <name>", "with --to or --list: the provider whose sample to send"))
    .addOption(new Option("--secret <secret>", "with --to: the secret your app verifies with (Discord, SendGrid: your private key)"))
    .addOption(new Option("--timeout <seconds>", "with --to: how long to wait for the answer").default(30).argParser(Number))
    .addHelpText(
      "after",
      "\nExamples:\n  whc trigger billing invoice.paid --set data.object.amount_paid=500\n" +
        "  whc trigger --to http://localhost:3000/webhooks --provider stripe --secret whsec_... invoice.paid\n  whc trigger --list --provider github",
    )
    .action(async (first: string | undefined, second: string | undefined, o: TriggerOptions) => {
      const c = ctx();
      if (o.list) return list(c, o.provider);
      if (o.to !== undefined) {
        // With --to there is no endpoint: the one argument is the event type.
        if (first === undefined || second !== undefined) throw new CliError("with --to, give the event type alone");
        return sendLocally(c, first, o);
      }
      if (first === undefined || second === undefined) throw new CliError("give the endpoint and the event type (or --to URL, or --list)");
      const client = c.api();
      const endpointId = (await resolveEndpoint(client, first)).id;
      const set = o.set.length > 0 ? { set: Object.fromEntries(o.set) } : {};
      const { eventId } = await c.out.busy("triggering", () => client.endpoints.trigger(endpointId, { eventType: second, ...set }));
      c.out.result({ eventId }, () => eventId);
    });
}
