import { setTimeout as sleep } from "node:timers/promises";
import type { Command } from "commander";
import { ApiError, type ApiClient } from "@whc/api-model";
import type { Context } from "../context.js";
import { CliError, errorText, exitKindOf } from "../exit-codes.js";
import { exportConfig } from "../config-as-code/export.js";
import { planChanges, planLine, type Change } from "../config-as-code/plan.js";
import { fileLabel, readConfigFile } from "../config-as-code/read-file.js";
import { readSecrets } from "../config-as-code/secrets.js";

interface ApplyOptions {
  file: string;
  dryRun?: boolean;
  prune?: boolean;
}

/** How many times one change waits out the key's request rate (429 with Retry-After) before giving up. */
const THROTTLED_TRIES = 10;

/** One change; a file of hundreds of endpoints outruns the key's request rate, which is waited out. */
async function applyChange(client: ApiClient, change: Change): Promise<void> {
  for (let tries = 1; ; tries++) {
    try {
      if (change.action === "create") await client.endpoints.create(change.body);
      else if (change.action === "update") await client.endpoints.update(change.id, change.body);
      else await client.endpoints.delete(change.id);
      return;
    } catch (err) {
      const wait = ApiError.is(err) ? err.throttledForMs : undefined;
      if (wait === undefined || tries >= THROTTLED_TRIES) throw err;
      await sleep(wait);
    }
  }
}

/** A failed change, said with the change it was and how far the run got; the exit code stays the failure's. */
function failedAt(err: unknown, change: Change, applied: number, total: number): CliError {
  const what = planLine(change).replace(/^[+~-] /, "");
  return new CliError(`${what}: ${errorText(err)}; ${applied} of ${total} changes applied (each printed above)`, exitKindOf(err));
}

/** `whc apply -f FILE [--dry-run] [--prune]` and `whc export-config` (design §16, "Configuration as code"). */
export function configCommands(program: Command, ctx: () => Context): void {
  program
    .command("apply")
    .description("make the account's endpoints match a file (each by slug), printing the plan; running it again changes nothing")
    .requiredOption("-f, --file <file>", "the file (YAML or JSON; docs/webhooks.schema.json); - reads stdin")
    .option("--dry-run", "print the plan and change nothing")
    .option("--prune", "also delete the account's endpoints the file does not name (and their events)")
    .action(async (opts: ApplyOptions) => {
      const { out, api, env } = ctx();
      const label = fileLabel(opts.file);
      const file = await readConfigFile(opts.file);
      const secrets = readSecrets(file, env, label);
      const client = api();
      const current = await out.busy("reading the account's endpoints", () => client.endpoints.all());
      const { changes, kept } = planChanges(file, current, secrets, Boolean(opts.prune));
      const notApplied = file.alertChannels.map((c) => c.name);
      const human = !out.json;
      let applied = 0;
      for (const change of changes) {
        if (!opts.dryRun) {
          try {
            await out.busy(planLine(change), () => applyChange(client, change));
          } catch (err) {
            throw failedAt(err, change, applied, changes.length);
          }
          applied++;
        }
        if (human) process.stdout.write(`${planLine(change)}\n`);
      }
      if (human) {
        if (changes.length === 0) process.stdout.write("no changes\n");
        for (const name of notApplied) process.stdout.write(`! alert channel ${name}: not applied (this version's API has no alert channels yet)\n`);
        if (kept.length > 0) process.stderr.write(`kept, not in the file (--prune deletes them): ${kept.join(", ")}\n`);
        if (opts.dryRun && changes.length > 0) process.stderr.write("dry run: nothing was changed\n");
        return;
      }
      const summary = changes.map((c) => ({ action: c.action, slug: c.slug, ...(c.action === "update" ? { fields: c.fields } : {}) }));
      out.result({ dryRun: Boolean(opts.dryRun), changes: summary, applied, kept, alertChannelsNotApplied: notApplied }, () => "");
    });

  program
    .command("export-config")
    .description("print the account's endpoints as a file whc apply takes (secrets left out)")
    .action(async () => {
      const { out, api } = ctx();
      const client = api();
      const endpoints = await out.busy("reading the account's endpoints", () => client.endpoints.all());
      process.stdout.write(exportConfig(endpoints));
    });
}
