import type { Middleware } from "koa";
import { UNTRUSTED_CONTENT_HEADERS } from "@whc/api-model";

/**
 * Every answer of the gateway's API may carry a tenant's bytes (an event's body and headers,
 * an endpoint's configured answer, a destination's answer in an attempt, an export): none may
 * be sniffed into HTML or run as a page of the gateway's origin, where the dashboard's session
 * lives (design §14). Set first, so error answers carry them too; the dashboard's own page
 * sets its policy over this one.
 */
export function untrustedContent(): Middleware {
  return async function untrustedContentMiddleware(ctx, next) {
    for (const [name, value] of UNTRUSTED_CONTENT_HEADERS) ctx.set(name, value);
    await next();
  };
}
