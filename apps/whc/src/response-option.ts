import { readFile } from "node:fs/promises";
import { checkShape, endpointResponseConfig, type EndpointResponseConfig } from "@whc/api-model";

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
  const checked = checkShape(endpointResponseConfig, json);
  if (checked.ok) return checked.value;
  const { field, message } = checked.problem;
  throw new Error(`--response ${field ? `field ${field}` : "(the whole value)"}: ${message} (nothing was sent)`);
}
