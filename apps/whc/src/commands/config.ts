import { setTimeout as sleep } from "node:timers/promises";
import type { Command } from "commander";
import { ApiError, type AlertChannelJson, type ApiClient, type ConfigFile, type EndpointJson } from "@whc/api-model";
import type { Context } from "../context.js";
import { CliError, errorText, exitKindOf } from "../exit-codes.js";
import { exportConfig } from "../config-as-code/export.js";
import { planChanges, planLine, type Change } from "../config-as-code/plan.js";
import { fileLabel, readConfigSource } from "../config-as-code/read-file.js";
import { readSecrets } from "../config-as-code/secrets.js";
import { channelLine, planChannels, type ChannelChange } from "../config-as-code/alert-plan.js";

interface ApplyOptions {
  file: string;
  dryRun?: boolean;
  prune?: boolean;
}

/** How many times one change waits out the key's request rate (429 with Retry-After) before giving up. */
const THROTTLED_TRIES = 10;

/** A file of hundreds of endpoints outruns the key's request rate, which is waited out. */
async function throttled(work: () => Promise<unknown>): Promise<void> {
  for (let tries = 1; ; tries++) {
    try {
      await work();
      return;
    } catch (err) {
      const wait = ApiError.is(err) ? err.throttledForMs : undefined;
      if (wait === undefined || tries >= THROTTLED_TRIES) throw err;
      await sleep(wait);
    }
  }
}

/** One step of the run: its plan line, what --json says of it, and the /v1 calls that make it. */
interface Step {
  line: string;
  summary: Record<string, unknown>;
  /** An endpoint step: what it does to which slug (config.applied names them). */
  endpoint?: { action: Change["action"]; slug: string };
  run(): Promise<void>;
}

function endpointStep(client: ApiClient, change: Change): Step {
  return {
    line: planLine(change),
    summary: { action: change.action, slug: change.slug, ...(change.action === "update" ? { fields: change.fields } : {}) },
    endpoint: { action: change.action, slug: change.slug },
    run: () =>
      throttled(() => {
        if (change.action === "create") return client.endpoints.create(change.body);
        if (change.action === "update") return client.endpoints.update(change.id, change.body);
        return client.endpoints.delete(change.id);
      }),
  };
}

/**
 * A channel's step. Its endpoints are named by slug in the file: their ids are read once the
 * endpoint steps before it ran (one of them may have just been created). A secret the server
 * generated (the file named none) is said once, as `whc alerts create` does.
 */
function channelStep(client: ApiClient, change: ChannelChange, endpointIds: () => Promise<Map<string, string>>, generated: Map<string, string>): Step {
  const create = async () => {
    if (change.action === "delete") return;
    const { endpointSlugs, ...body } = change.body;
    const ids = await endpointIds();
    const endpoints = endpointSlugs.map((slug) => ids.get(slug)!);
    const created = await client.alerts.create({ ...body, ...(endpoints.length ? { endpointIds: endpoints } : {}) });
    if (created.secret && !body.secret) generated.set(change.name, created.secret);
  };
  return {
    line: channelLine(change),
    summary: { action: change.action, alertChannel: change.name, ...(change.action === "replace" ? { fields: change.fields } : {}) },
    async run() {
      if (change.action !== "create") await throttled(() => client.alerts.delete(change.id));
      await throttled(create);
    },
  };
}

/**
 * The run's config.applied entry in the audit log (design §15): the file's hash, the changes
 * planned and made, the endpoints created, updated and deleted. Recorded after any change, also
 * when a refusal stopped the run; a failure to record it is said, and changes nothing else.
 */
async function recordApplied(client: ApiClient, sha256: string, steps: readonly Step[], applied: number): Promise<void> {
  const made = steps.slice(0, applied).flatMap((s) => (s.endpoint ? [s.endpoint] : []));
  const slugs = (action: Change["action"]) => made.filter((e) => e.action === action).map((e) => e.slug);
  try {
    await throttled(() => client.audit.configApplied({ sha256, total: steps.length, applied, created: slugs("create"), updated: slugs("update"), deleted: slugs("delete") }));
  } catch (err) {
    process.stderr.write(`warning: the audit log's config.applied entry was not recorded: ${errorText(err)}\n`);
  }
}

/** A failed step, said with the change it was and how far the run got; the exit code stays the failure's. */
function failedAt(err: unknown, step: Step, applied: number, total: number): CliError {
  const what = step.line.replace(/^[+~-] /, "");
  return new CliError(`${what}: ${errorText(err)}; ${applied} of ${total} changes applied (each printed above)`, exitKindOf(err));
}

/**
 * The account's channels, when the run needs them: a file that names none, applied with a key
 * that may not read channels (alerts:write), leaves them alone even with --prune.
 */
async function currentChannels(client: ApiClient, file: ConfigFile): Promise<AlertChannelJson[] | undefined> {
  try {
    return (await client.alerts.list()).items;
  } catch (err) {
    if (file.alertChannels.length === 0 && ApiError.is(err) && err.status === 403) return undefined;
    throw err;
  }
}

/** Every step of the run: endpoint creates and updates, channel creates and replaces, then deletes (endpoints', channels'). */
function stepsOf(client: ApiClient, endpointChanges: Change[], channelChanges: ChannelChange[], generated: Map<string, string>): Step[] {
  let ids: Promise<Map<string, string>> | undefined;
  const endpointIds = () => (ids ??= client.endpoints.all().then((all: EndpointJson[]) => new Map(all.map((e) => [e.slug, e.id]))));
  const endpoints = endpointChanges.map((c) => endpointStep(client, c));
  const channels = channelChanges.map((c) => channelStep(client, c, endpointIds, generated));
  const isDelete = (s: Step) => s.summary.action === "delete";
  return [...endpoints.filter((s) => !isDelete(s)), ...channels.filter((s) => !isDelete(s)), ...endpoints.filter(isDelete), ...channels.filter(isDelete)];
}

/** `whc apply -f FILE [--dry-run] [--prune]` and `whc export-config` (design §16, "Configuration as code"). */
export function configCommands(program: Command, ctx: () => Context): void {
  program
    .command("apply")
    .description("make the account's endpoints (each by slug) and alert channels (each by name) match a file, printing the plan; running it again changes nothing")
    .requiredOption("-f, --file <file>", "the file (YAML or JSON; docs/webhooks.schema.json); - reads stdin")
    .option("--dry-run", "print the plan and change nothing")
    .option("--prune", "also delete the account's endpoints (and their events) and alert channels the file does not name")
    .action(async (opts: ApplyOptions) => {
      const { out, api, env } = ctx();
      const label = fileLabel(opts.file);
      const { config: file, sha256 } = await readConfigSource(opts.file);
      const secrets = readSecrets(file, env, label);
      const client = api();
      const current = await out.busy("reading the account's endpoints", () => client.endpoints.all());
      const channels = await out.busy("reading the account's alert channels", () => currentChannels(client, file));
      const prune = Boolean(opts.prune);
      const endpointPlan = planChanges(file, current, secrets, prune);
      const channelPlan = channels ? planChannels(file, channels, current, secrets, prune) : { changes: [], kept: [] };
      const generated = new Map<string, string>();
      const steps = stepsOf(client, endpointPlan.changes, channelPlan.changes, generated);
      const human = !out.json;
      let applied = 0;
      for (const step of steps) {
        if (!opts.dryRun) {
          try {
            await out.busy(step.line, () => step.run());
          } catch (err) {
            if (applied > 0) await recordApplied(client, sha256, steps, applied);
            throw failedAt(err, step, applied, steps.length);
          }
          applied++;
        }
        if (human) process.stdout.write(`${step.line}\n`);
      }
      if (applied > 0) await recordApplied(client, sha256, steps, applied);
      if (human) {
        if (steps.length === 0) process.stdout.write("no changes\n");
        for (const [name, secret] of generated) process.stderr.write(`alert channel ${name}: secret ${secret} (shown this once; name one with secretFromEnv to choose it)\n`);
        if (endpointPlan.kept.length > 0) process.stderr.write(`kept, not in the file (--prune deletes them): ${endpointPlan.kept.join(", ")}\n`);
        if (channelPlan.kept.length > 0) process.stderr.write(`alert channels kept, not in the file (--prune deletes them): ${channelPlan.kept.join(", ")}\n`);
        if (opts.dryRun && steps.length > 0) process.stderr.write("dry run: nothing was changed\n");
        return;
      }
      out.result(
        {
          dryRun: Boolean(opts.dryRun),
          changes: steps.map((s) => s.summary),
          applied,
          kept: endpointPlan.kept,
          alertChannelsKept: channelPlan.kept,
          ...(generated.size ? { generatedSecrets: Object.fromEntries(generated) } : {}),
        },
        () => "",
      );
    });

  program
    .command("export-config")
    .description("print the account's endpoints and alert channels as a file whc apply takes (secrets left out)")
    .action(async () => {
      const { out, api } = ctx();
      const client = api();
      const endpoints = await out.busy("reading the account's endpoints", () => client.endpoints.all());
      const channels = await out.busy("reading the account's alert channels", () => client.alerts.list().then((l) => l.items));
      process.stdout.write(exportConfig(endpoints, channels));
    });
}
