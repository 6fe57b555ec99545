import type { ConfigFile } from "@whc/api-model";
import { CliError } from "../exit-codes.js";

/** The environment variables a file names for its secrets, each with the field that names it. */
function namedVariables(file: ConfigFile): [field: string, variable: string][] {
  return [
    ...file.endpoints.flatMap((e, i): [string, string][] => [
      ...(e.secretFromEnv ? [[`endpoints.${i}.secretFromEnv`, e.secretFromEnv] as [string, string]] : []),
      ...(e.forward?.targetSecretFromEnv ? [[`endpoints.${i}.forward.targetSecretFromEnv`, e.forward.targetSecretFromEnv] as [string, string]] : []),
      ...(e.inbound?.basicAuth?.passwordFromEnv ? [[`endpoints.${i}.inbound.basicAuth.passwordFromEnv`, e.inbound.basicAuth.passwordFromEnv] as [string, string]] : []),
      ...(e.inbound?.headerToken?.valueFromEnv ? [[`endpoints.${i}.inbound.headerToken.valueFromEnv`, e.inbound.headerToken.valueFromEnv] as [string, string]] : []),
      ...(e.destinations ?? []).flatMap((d, j): [string, string][] =>
        d.targetSecretFromEnv ? [[`endpoints.${i}.destinations.${j}.targetSecretFromEnv`, d.targetSecretFromEnv]] : [],
      ),
    ]),
    ...file.alertChannels.flatMap((c, i): [string, string][] => (c.secretFromEnv ? [[`alertChannels.${i}.secretFromEnv`, c.secretFromEnv]] : [])),
  ];
}

/**
 * Every secret the file names, read from `env` now: a variable that is unset or empty stops
 * the run before anything is sent, naming the variable and the field (all of them at once).
 */
export function readSecrets(file: ConfigFile, env: NodeJS.ProcessEnv, label: string): Map<string, string> {
  const values = new Map<string, string>();
  const missing: string[] = [];
  for (const [field, variable] of namedVariables(file)) {
    const value = env[variable];
    if (value) values.set(variable, value);
    else missing.push(`${label}: ${field}: the environment variable ${variable} is ${value === undefined ? "not set" : "empty"}`);
  }
  if (missing.length > 0) throw new CliError(`${missing.join("\nerror: ")}\nnothing was changed`);
  return values;
}
