import { Command, CommanderError, Option } from "commander";
import { ApiError } from "@whc/api-model";
import { endpointCommands } from "./commands/endpoints.js";
import { eventCommands } from "./commands/events.js";
import { keyCommands } from "./commands/keys.js";
import { auditCommand } from "./commands/audit.js";
import { listenCommand } from "./commands/listen.js";
import { triggerCommand } from "./commands/trigger.js";
import { contextOf } from "./context.js";
import { exitCodeOf, exitCodesHelp } from "./exit-codes.js";

/** The `whc` command line; `env` is a parameter so tests can run it. */
export function buildCli(env: NodeJS.ProcessEnv): Command {
  const program = new Command("whc")
    .description("Webhook Capture from the command line")
    .addOption(new Option("--json", "machine-readable output"))
    .addOption(new Option("--api-url <url>", "the gateway").env("WHC_API_URL").default("http://localhost:8080"))
    .addOption(new Option("--api-key <key>", "an API key").env("WHC_API_KEY"))
    .showHelpAfterError()
    // Usage errors are thrown (and printed by commander) rather than exiting, so they get the table's code.
    .exitOverride()
    .addHelpText("after", `\nEndpoints are named by id or slug everywhere.\n\n${exitCodesHelp()}`);
  const ctx = contextOf(program, env);
  keyCommands(program, ctx);
  endpointCommands(program, ctx);
  eventCommands(program, ctx);
  listenCommand(program, ctx);
  triggerCommand(program, ctx);
  auditCommand(program, ctx);
  return program;
}

function errorLine(err: unknown): string {
  if (ApiError.is(err)) {
    const { field, reason } = err.details;
    // validation_failed names the field and why: the words a person fixes the command with.
    const where = typeof field === "string" ? `: ${field}${typeof reason === "string" ? ` (${reason})` : ""}` : "";
    const message = where ? err.message.replace(/\.$/, "") : err.message;
    return `error: ${message}${where}${err.code ? ` (${err.code}` : ""}${err.requestId ? `, request ${err.requestId})` : err.code ? ")" : ""}`;
  }
  return `error: ${(err as { message?: string }).message ?? String(err)}`;
}

export async function runCli(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  try {
    await buildCli(env).parseAsync(argv);
    return 0;
  } catch (err) {
    // commander has already said what was wrong with the command line (or printed the help).
    if (!(err instanceof CommanderError)) process.stderr.write(`${errorLine(err)}\n`);
    return exitCodeOf(err);
  }
}
