import { endpointResponseConfig, type EndpointResponseConfig } from "@whc/api-model";

/**
 * Checks a response configuration (docs/design.md §10) as typed in the edit form. Loaded on
 * demand: it brings the /v1 schemas (zod) that the rest of the page does without.
 */
export type ResponseCheck = { ok: true; value: EndpointResponseConfig } | { ok: false; problem: string };

type Issue = NonNullable<ReturnType<typeof endpointResponseConfig.safeParse>["error"]>["issues"][number];

/** Dotted as the API names fields (`rules.0.status`); an unknown key is named itself. */
function issuePath(issue: Issue): string {
  const path = issue.path.map(String);
  if (issue.code === "unrecognized_keys" && issue.keys[0]) path.push(issue.keys[0]);
  return path.join(".");
}

export function checkResponse(text: string): ResponseCheck {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, problem: `not JSON: ${(err as Error).message}` };
  }
  const result = endpointResponseConfig.safeParse(json);
  if (result.success) return { ok: true, value: result.data };
  const issue = result.error.issues[0]!;
  return { ok: false, problem: `${issuePath(issue) || "the whole value"}: ${issue.message}` };
}
