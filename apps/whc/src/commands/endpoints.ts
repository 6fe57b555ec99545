import { type Command, InvalidArgumentError, Option } from "commander";
import {
  OPERATING_MODES,
  checkShape,
  redactSettings,
  type CreateEndpointRequest,
  type EndpointJson,
  type ForwardSettingsInput,
  type RedactSettings,
  type UpdateEndpointRequest,
} from "@whc/api-model";
import { PROVIDER_NAMES } from "@whc/signatures";
import type { Context } from "../context.js";
import { resolveEndpoint } from "../endpoint-ref.js";
import { oneOf, table } from "../output.js";
import { readResponseOption } from "../response-option.js";
import { describeEndpoint, forwardText, redactText } from "../views.js";
import { inboundOf, inboundText, withInboundOptions, type InboundFlags } from "../inbound-options.js";
import { destinationCommands } from "./destinations.js";
import { dedupeOf, dedupeText, withDedupeOptions, type DedupeFlags } from "../dedupe-options.js";

/** The command-line flags that make a destination's settings (design §11). */
interface ForwardFlags {
  mode?: string;
  forwardTo?: string;
  forwardTimeoutMs?: number;
  forwardMaxAttempts?: number;
  keepPath?: boolean;
  targetSecret?: string;
}

/** The repeatable flags that make an endpoint's `redact` (design §16). */
interface RedactFlags {
  redactHeader?: string[];
  redactJsonPath?: string[];
  redactPattern?: string[];
}

interface CreateOptions extends ForwardFlags, InboundFlags, RedactFlags, DedupeFlags {
  slug?: string;
  name?: string;
  provider?: string;
  secret?: string;
  metadataOnly?: boolean;
}

interface UpdateOptions extends ForwardFlags, InboundFlags, RedactFlags, DedupeFlags {
  /** false for `--no-forward`. */
  forward?: false;
  /** false for `--no-redact`. */
  redact?: false;
  name?: string;
  pause?: boolean;
  resume?: boolean;
  provider?: string;
  secret?: string;
  removeSecret?: boolean;
  /** The text given, or false for `--no-response`; undefined when neither was given. */
  response?: string | false;
  replayFromApi?: boolean;
  replayFromDashboard?: boolean;
}

/** The `forward` object from --forward-to and its companions; undefined without --forward-to. */
function forwardSettingsOf(opts: ForwardFlags): ForwardSettingsInput | undefined {
  if (opts.forwardTo === undefined) {
    const orphan = [opts.forwardTimeoutMs, opts.forwardMaxAttempts, opts.keepPath, opts.targetSecret].some((v) => v !== undefined);
    if (orphan) throw new Error("--forward-timeout-ms, --forward-max-attempts, --keep-path and --target-secret go with --forward-to");
    return undefined;
  }
  return {
    url: opts.forwardTo,
    ...(opts.keepPath !== undefined ? { keepPath: opts.keepPath } : {}),
    ...(opts.forwardTimeoutMs !== undefined ? { timeoutMs: opts.forwardTimeoutMs } : {}),
    ...(opts.forwardMaxAttempts !== undefined ? { maxAttempts: opts.forwardMaxAttempts } : {}),
    ...(opts.targetSecret !== undefined ? { targetSecret: opts.targetSecret } : {}),
  };
}

/**
 * The `redact` object from the --redact-* flags, checked here so a bad path or pattern is named
 * before anything is sent; undefined when none was given.
 */
function redactSettingsOf(opts: RedactFlags): RedactSettings | undefined {
  const lists: Record<string, string[] | undefined> = { headers: opts.redactHeader, jsonPaths: opts.redactJsonPath, patterns: opts.redactPattern };
  if (Object.values(lists).every((l) => l === undefined)) return undefined;
  const checked = checkShape(redactSettings, Object.fromEntries(Object.entries(lists).filter(([, l]) => l !== undefined)));
  if (checked.ok) return checked.value;
  const { field, message } = checked.problem;
  const [list = "", index] = field.split(".");
  const value = index === undefined ? undefined : lists[list]?.[Number(index)];
  throw new Error(`${REDACT_FLAGS[list] ?? "--redact-*"}${value === undefined ? "" : ` ${JSON.stringify(value)}`}: ${message} (nothing was sent)`);
}

const REDACT_FLAGS: Record<string, string> = { headers: "--redact-header", jsonPaths: "--redact-json-path", patterns: "--redact-pattern" };

/** --forward-to alone means relay: the mode that forwards without changing what senders get. */
function modeOf(opts: ForwardFlags & { metadataOnly?: boolean }): string | undefined {
  if (opts.metadataOnly) return "metadata_only";
  return opts.mode ?? (opts.forwardTo !== undefined ? "relay" : undefined);
}

function createRequest(opts: CreateOptions): CreateEndpointRequest {
  const forward = forwardSettingsOf(opts);
  const redact = redactSettingsOf(opts);
  const mode = modeOf(opts);
  const inbound = inboundOf(opts);
  const dedupe = dedupeOf(opts);
  return {
    ...(opts.slug ? { slug: opts.slug } : {}),
    ...(opts.name ? { displayName: opts.name } : {}),
    ...(opts.provider ? { provider: opts.provider } : {}),
    ...(opts.secret ? { secret: opts.secret } : {}),
    ...(mode ? { operatingMode: mode as CreateEndpointRequest["operatingMode"] } : {}),
    ...(forward ? { forward } : {}),
    ...(inbound ? { inbound } : {}),
    ...(redact ? { redact } : {}),
    ...(dedupe ? { dedupe } : {}),
  };
}

function integerArgument(value: string): number {
  if (!/^\d{1,9}$/.test(value)) throw new InvalidArgumentError("a whole number");
  return Number(value);
}

/** The forwarding options both create and update take. */
function withForwardOptions(command: Command): Command {
  return command
    .addOption(new Option("--mode <mode>", "operating mode").choices(OPERATING_MODES))
    .option("--forward-to <url>", "relay (or --mode proxy) to this destination; the capture's sub-path and query are appended")
    .addOption(new Option("--forward-timeout-ms <ms>", "deadline of one forward attempt (default 10000)").argParser(integerArgument))
    .addOption(new Option("--forward-max-attempts <n>", "relay: attempts before giving up (default 6)").argParser(integerArgument))
    .addOption(new Option("--keep-path <bool>", "append the capture's sub-path and query (default true)").argParser(booleanArgument))
    .option("--target-secret <secret>", "re-sign forwarded requests with this secret (write-only)");
}

/** Each use of a repeatable flag adds its value. */
function repeated(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** The redaction options both create and update take (design §16). */
function withRedactOptions(command: Command): Command {
  return command
    .option("--redact-header <name>", "store this header's values as [redacted] (repeatable)", repeated)
    .option("--redact-json-path <path>", 'store the JSON value at $.a.b, $.a[0] or $.a[*].b as "[redacted]" (repeatable)', repeated)
    .option("--redact-pattern <regex>", "store matches of this bounded regular expression in UTF-8 bodies as [redacted] (repeatable)", repeated);
}

function booleanArgument(value: string): boolean {
  if (value === "true") return true;
  if (value === "false") return false;
  throw new InvalidArgumentError("true or false");
}

/** The PATCH body: only what was asked for, since every field given replaces the stored one. */
async function updateRequest(opts: UpdateOptions, current?: EndpointJson): Promise<UpdateEndpointRequest> {
  const forward = forwardSettingsOf(opts);
  const inbound = inboundOf(opts, current?.inbound);
  const redact = redactSettingsOf(opts);
  if (redact && opts.redact === false) throw new Error("--no-redact removes every redaction: give it without --redact-* (nothing was sent)");
  // Before the endpoint is read, a window alone is taken as if it had settings to keep.
  const dedupe = dedupeOf(opts, current ? current.dedupe : opts.dedupe === undefined ? { windowSeconds: 1, key: "auto" } : undefined);
  const body: UpdateEndpointRequest = {
    ...(opts.mode !== undefined ? { operatingMode: opts.mode as UpdateEndpointRequest["operatingMode"] } : {}),
    ...(opts.forward === false ? { forward: null } : forward ? { forward } : {}),
    ...(opts.name !== undefined ? { displayName: opts.name } : {}),
    ...(opts.pause ? { status: "paused" } : opts.resume ? { status: "active" } : {}),
    ...(opts.provider !== undefined ? { provider: opts.provider } : {}),
    ...(opts.secret !== undefined ? { secret: opts.secret } : opts.removeSecret ? { secret: null } : {}),
    ...(opts.response === false ? { response: null } : opts.response !== undefined ? { response: await readResponseOption(opts.response) } : {}),
    ...(opts.replayFromApi !== undefined ? { replayFromApi: opts.replayFromApi } : {}),
    ...(opts.replayFromDashboard !== undefined ? { replayFromDashboard: opts.replayFromDashboard } : {}),
    ...(inbound !== undefined ? { inbound } : {}),
    ...(opts.redact === false ? { redact: null } : redact ? { redact } : {}),
    ...(dedupe !== undefined ? { dedupe } : {}),
  };
  if (Object.keys(body).length === 0) throw new Error("nothing to update: give at least one option (whc endpoints update --help)");
  return body;
}

function shortened(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** What the update changed, one line each, in the endpoint's own words. */
function changeLines(body: UpdateEndpointRequest, e: EndpointJson): string[] {
  const lines: string[] = [];
  if (body.displayName !== undefined) lines.push(`name: ${e.displayName}`);
  if (body.status !== undefined) lines.push(`status: ${e.status}${e.status === "paused" ? " (captures are refused with 503)" : ""}`);
  if (body.provider !== undefined) lines.push(`provider: ${e.provider}`);
  if (body.operatingMode !== undefined) lines.push(`mode: ${e.operatingMode}`);
  if (body.forward === null) lines.push("forward: removed");
  else if (body.forward !== undefined && e.forward) {
    lines.push(`forward: ${forwardText(e.forward)}`);
  }
  if (typeof body.secret === "string") {
    lines.push(`secret: rotated${e.secretRotatedAt ? ` at ${e.secretRotatedAt}` : ""}; the previous one keeps verifying for WHC_SECRET_GRACE_S`);
  }
  if (body.secret === null) lines.push("secret: removed");
  if (body.response === null) lines.push("response: removed (answers 200 with the event id)");
  else if (body.response !== undefined) lines.push(`response: ${shortened(JSON.stringify(e.response ?? body.response), 200)}`);
  if (body.redact === null) lines.push("redact: removed (captures are stored as sent)");
  else if (body.redact !== undefined) lines.push(`redact: ${e.redact ? redactText(e.redact) : "nothing"}`);
  if (body.dedupe === null) lines.push("dedupe: removed (every capture is forwarded)");
  else if (body.dedupe !== undefined && e.dedupe) lines.push(`dedupe: ${dedupeText(e.dedupe)}`);
  if (body.replayFromApi !== undefined) lines.push(`replay from the API: ${e.replayFromApi ? "allowed" : "refused"}`);
  if (body.replayFromDashboard !== undefined) lines.push(`replay from the dashboard: ${e.replayFromDashboard ? "allowed" : "refused"}`);
  if (body.inbound !== undefined) lines.push(`inbound: ${inboundText(e)}`);
  return lines.map((l) => `  ${l}`);
}

/** `whc endpoints list|get|create|update|delete`. */
export function endpointCommands(program: Command, ctx: () => Context): void {
  const endpoints = program.command("endpoints").description("receiving endpoints");

  endpoints
    .command("list")
    .description("every endpoint of the account, oldest first (all pages)")
    .action(async () => {
      const { out, api } = ctx();
      const client = api();
      const items = await out.busy("listing", () => client.endpoints.all());
      out.result(items, () =>
        table([["ID", "SLUG", "EVENTS", "STATUS", "WEBHOOK URL"], ...items.map((e) => [e.id, e.slug, String(e.eventCount), e.status, e.webhookUrl])]),
      );
    });

  endpoints
    .command("get")
    .description("one endpoint's settings and counts")
    .argument("<endpoint>", "its id or slug")
    .action(async (ref: string) => {
      const { out, api } = ctx();
      const client = api();
      const e = await out.busy("reading", async () => client.endpoints.get((await resolveEndpoint(client, ref)).id));
      out.result(e, () => describeEndpoint(e));
    });

  withDedupeOptions(withRedactOptions(withInboundOptions(withForwardOptions(endpoints.command("create")))))
    .option("--slug <slug>")
    .option("--name <displayName>")
    .option("--provider <provider>", oneOf(PROVIDER_NAMES))
    .option("--secret <secret>", "the signing secret (write-only)")
    .option("--metadata-only", "never store bodies")
    .action(async (opts: CreateOptions) => {
      const { out, api } = ctx();
      const client = api();
      const e = await out.busy("creating", () => client.endpoints.create(createRequest(opts)));
      const forwarding = e.forward ? `\n${e.operatingMode} to ${e.forward.url}` : "";
      const redacting = e.redact ? `\nredacts ${redactText(e.redact)}` : "";
      const deduplicating = e.dedupe ? `\ndeduplicates ${dedupeText(e.dedupe)}` : "";
      out.result(e, () => `created ${e.slug} (${e.id})\nsend webhooks to ${e.webhookUrl}${forwarding}${redacting}${deduplicating}`);
    });

  withDedupeOptions(withRedactOptions(withInboundOptions(withForwardOptions(endpoints.command("update")))))
    .description("change an endpoint; only the options given change (the --redact-* flags given replace every redaction)")
    .argument("<endpoint>", "its id or slug")
    .option("--name <displayName>")
    .addOption(new Option("--pause", "refuse captures (503) until resumed").conflicts("resume"))
    .option("--resume", "accept captures again")
    .option("--provider <provider>", oneOf(PROVIDER_NAMES))
    .addOption(
      new Option("--secret <secret>", "a new signing secret (write-only); the previous one keeps verifying for WHC_SECRET_GRACE_S").conflicts("removeSecret"),
    )
    .option("--remove-secret", "verify nothing from now on")
    .option("--response <json>", "what the endpoint answers (design §10), as JSON or @file.json; checked here before sending")
    .option("--no-response", "answer 200 with the event id again")
    .option("--no-forward", "remove every destination (and their target secrets); set --mode capture too")
    .option("--no-inbound", "remove the inbound protection: anyone may send again")
    .option("--no-redact", "store captures as sent again (the events already stored stay redacted)")
    .option("--no-dedupe", "stop deduplicating: every capture is forwarded again")
    .addOption(new Option("--replay-from-api <bool>", "allow replays asked through the API").argParser(booleanArgument))
    .addOption(new Option("--replay-from-dashboard <bool>", "allow replays asked from the dashboard").argParser(booleanArgument))
    .action(async (ref: string, opts: UpdateOptions) => {
      const { out, api } = ctx();
      // Checked before anything is sent, the lookup by slug included.
      await updateRequest(opts);
      const client = api();
      let body: UpdateEndpointRequest = {};
      const e = await out.busy("updating", async () => {
        const found = await resolveEndpoint(client, ref);
        // Inbound flags change only their part: the rest of the protection is the endpoint's.
        body = await updateRequest(opts, found);
        return client.endpoints.update(found.id, body);
      });
      out.result(e, () => [`updated ${e.slug} (${e.id})`, ...changeLines(body, e)].join("\n"));
    });

  endpoints
    .command("delete")
    .argument("<endpoint>", "its id or slug")
    .action(async (ref: string) => {
      const { out, api } = ctx();
      const client = api();
      const e = await out.busy("deleting", async () => {
        const found = await resolveEndpoint(client, ref);
        await client.endpoints.delete(found.id);
        return found;
      });
      out.result({ id: e.id, deleted: true }, () => `deleted ${e.slug} (${e.id}) and its events`);
    });

  destinationCommands(endpoints, ctx);
}
