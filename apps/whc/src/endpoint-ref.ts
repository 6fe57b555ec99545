import type { ApiClient, EndpointJson } from "@whc/api-model";
import { CliError } from "./exit-codes.js";

/**
 * The endpoint a command names, by id or by slug. Both are looked up in the account's list:
 * a slug may itself look like an id, and an id is matched first because ids never repeat.
 */
export async function resolveEndpoint(client: ApiClient, ref: string): Promise<EndpointJson> {
  const { items } = await client.endpoints.list();
  const found = items.find((e) => e.id === ref) ?? items.find((e) => e.slug === ref);
  if (!found) throw new CliError(`no endpoint with the id or slug "${ref}" in this account`, "notFound");
  return found;
}
