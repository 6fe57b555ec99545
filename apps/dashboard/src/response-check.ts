import { checkShape, endpointResponseConfig, redactSettings, redactsAnything, type EndpointResponseConfig, type RedactSettings } from "@whc/api-model";

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

export type RedactCheck = { ok: true; value: RedactSettings | null } | { ok: false; problem: string };

/** Checks the redaction lists as typed (design §16): null when they redact nothing. */
export function checkRedact(lists: RedactSettings): RedactCheck {
  const checked = checkShape(redactSettings, lists);
  if (!checked.ok) return { ok: false, problem: `${checked.problem.field}: ${checked.problem.message}` };
  return { ok: true, value: redactsAnything(checked.value) ? checked.value : null };
}
