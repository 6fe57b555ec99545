import { ApiError, uuid, type ApiClient, type EndpointJson } from "@whc/api-model";
import { CliError } from "./exit-codes.js";

/**
 * The endpoint a command names, by id or by slug. An id is tried first because ids never
 * repeat; a ref that is no endpoint's id (a slug may look like one) is then looked for as a
 * slug through every page of the account's endpoints, stopping at the page that has it.
 */
export async function resolveEndpoint(client: ApiClient, ref: string): Promise<EndpointJson> {
  // Whatever the gateway takes as a path id; anything else would be refused, not looked up.
  if (uuid.safeParse(ref).success) {
    try {
      return await client.endpoints.get(ref);
    } catch (err) {
      if (!ApiError.is(err) || err.status !== 404) throw err;
    }
  }
  for await (const page of client.endpoints.pages()) {
    const found = page.items.find((e) => e.slug === ref);
    if (found) return found;
  }
  throw new CliError(`no endpoint with the id or slug "${ref}" in this account`, "notFound");
}
