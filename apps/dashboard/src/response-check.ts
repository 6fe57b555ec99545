import { checkShape, endpointResponseConfig, type EndpointResponseConfig } from "@whc/api-model";

/**
 * Checks a response configuration (docs/design.md §10) as typed in the edit form. Loaded on
 * demand: it brings the /v1 schemas (zod) that the rest of the page does without.
 */
export type ResponseCheck = { ok: true; value: EndpointResponseConfig } | { ok: false; problem: string };

export function checkResponse(text: string): ResponseCheck {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, problem: `not JSON: ${(err as Error).message}` };
  }
  const checked = checkShape(endpointResponseConfig, json);
  if (checked.ok) return { ok: true, value: checked.value };
  return { ok: false, problem: `${checked.problem.field || "the whole value"}: ${checked.problem.message}` };
}
