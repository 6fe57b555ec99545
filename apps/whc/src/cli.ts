import { Command, CommanderError, Option } from "commander";
import { endpointCommands } from "./commands/endpoints.js";
import { eventCommands } from "./commands/events.js";
import { keyCommands } from "./commands/keys.js";
import { auditCommand } from "./commands/audit.js";
import { alertCommands } from "./commands/alerts.js";
import { redeliverCommands } from "./commands/redeliver.js";
import { destinationControlCommands } from "./commands/destinations.js";
import { listenCommand } from "./commands/listen.js";
import { triggerCommand } from "./commands/trigger.js";
import { configCommands } from "./commands/config.js";
import { scenarioCommands } from "./commands/scenario.js";
import { schemasCommand } from "./commands/schemas.js";
import { contextOf } from "./context.js";
import { errorText, exitCodeOf, exitCodesHelp } from "./exit-codes.js";

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
  scenarioCommands(program, ctx);
  schemasCommand(program, ctx);
  configCommands(program, ctx);
  auditCommand(program, ctx);
  alertCommands(program, ctx);
  redeliverCommands(program, ctx);
  destinationControlCommands(program, ctx);
  return program;
}

export async function runCli(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  try {
    await buildCli(env).parseAsync(argv);
    return 0;
  } catch (err) {
    // commander has already said what was wrong with the command line (or printed the help).
    if (!(err instanceof CommanderError)) process.stderr.write(`error: ${errorText(err)}\n`);
    return exitCodeOf(err);
  }
}
