import type { Middleware } from "koa";
import { randomUUID } from "node:crypto";
import { requestContext } from "@whc/logging";

const ACCEPTED = /^[A-Za-z0-9._-]{1,128}$/;

/** Keeps a well-formed inbound X-Request-Id, else makes one; every response carries it. */
export function requestId(): Middleware {
  return async function requestIdMiddleware(ctx, next) {
    const inbound = ctx.get("x-request-id");
    const id = ACCEPTED.test(inbound) ? inbound : randomUUID();
    ctx.state.requestId = id;
    ctx.set("X-Request-Id", id);
    await requestContext.run({ requestId: id }, next);
  };
}
