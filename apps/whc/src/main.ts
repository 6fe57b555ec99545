import { runCli } from "./cli.js";

process.exitCode = await runCli(process.argv, process.env);
