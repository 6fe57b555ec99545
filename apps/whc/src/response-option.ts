import { readFile } from "node:fs/promises";
import { endpointResponseConfig, type EndpointResponseConfig } from "@whc/api-model";

type Issue = NonNullable<ReturnType<typeof endpointResponseConfig.safeParse>["error"]>["issues"][number];

/** Where an issue is, dotted as the API names fields (`rules.0.status`); an unknown key is named itself. */
export function issuePath(issue: Issue): string {
  const path = issue.path.map(String);
  if (issue.code === "unrecognized_keys" && issue.keys[0]) path.push(issue.keys[0]);
  return path.join(".");
}

/**
 * `--response <json | @file.json>`: read, parsed and checked against the §10 schema here, so a
 * mistake is named by its field before anything is sent.
 */
export async function readResponseOption(value: string): Promise<EndpointResponseConfig> {
  let text = value;
  if (value.startsWith("@")) {
    try {
      text = await readFile(value.slice(1), "utf8");
    } catch (err) {
      throw new Error(`--response: cannot read ${value.slice(1)}: ${(err as Error).message}`);
    }
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`--response: not JSON: ${(err as Error).message}`);
  }
  const result = endpointResponseConfig.safeParse(json);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const at = issuePath(issue);
  throw new Error(`--response ${at ? `field ${at}` : "(the whole value)"}: ${issue.message} (nothing was sent)`);
}
