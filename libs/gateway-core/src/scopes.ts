import { scopeAllows, seesEndpoint, type Scope } from "@whc/api-model";
import { AppError, notFound } from "@whc/errors";
import type { AuthState } from "./middleware/auth.js";

/** 403 `forbidden`: `details.scope` names the scope needed, `details.field` the part of a request that asked for more. */
export function forbidden(scope: Scope | undefined, field?: string): AppError {
  return new AppError("forbidden", scope ? `needs scope ${scope}` : `${field ?? "request"} wider than the key`, {
    ...(field ? { field } : {}),
    meta: scope ? { scope } : {},
  });
}

/** Refuses a key without `scope` (design §15). */
export function requireScope(auth: AuthState, scope: Scope): void {
  if (!scopeAllows(auth.scopes, scope)) throw forbidden(scope);
}

/**
 * An endpoint outside a restricted key's endpoints is 404, exactly as an unknown id (design
 * §15): the same error the catalog answers for an endpoint that is not there.
 */
export function requireVisibleEndpoint(auth: AuthState, endpointId: string): void {
  if (!seesEndpoint(auth.endpointIds, endpointId)) throw notFound("endpoint");
}

/**
 * The path parameter naming an endpoint: the segment after `endpoints` (`{id}` on the
 * endpoint's own operations, `{endpointId}` under it); undefined on other paths.
 */
export function endpointParam(path: string): string | undefined {
  const segments = path.split("/");
  const i = segments.indexOf("endpoints");
  const next = i >= 0 ? segments[i + 1] : undefined;
  return next?.startsWith("{") ? next.slice(1, -1) : undefined;
}
