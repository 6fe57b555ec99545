import Koa from "koa";
import Router from "@koa/router";
import { AppError } from "@whc/errors";
import type { GatewayDeps, GatewayOptions } from "./deps.js";
import { requestId } from "./middleware/request-id.js";
import { errorHandler } from "./middleware/errors.js";
import { authenticate, type AuthState } from "./middleware/auth.js";
import { createKeyRateLimiter } from "./key-quotas.js";
import { accessLog } from "./middleware/access-log.js";
import { tracing } from "./middleware/tracing.js";
import { createGatewayMetrics } from "./middleware/metrics.js";
import { dashboard } from "./middleware/dashboard.js";
import { untrustedContent } from "./middleware/untrusted-content.js";
import { buildOpenApiDocument } from "./openapi.js";
import { mountRoutes, type Route } from "./route.js";
import { systemRoutes } from "./routes/system.js";
import { endpointRoutes } from "./routes/v1/endpoints.js";
import { eventRoutes } from "./routes/v1/events.js";
import { eventActionRoutes } from "./routes/v1/event-actions.js";
import { forwardingRoutes } from "./routes/v1/forwarding.js";
import { triggerRoutes } from "./routes/v1/trigger.js";
import { eventSignatureRoutes } from "./routes/v1/event-signature.js";
import { schemaRoutes } from "./routes/v1/schemas.js";
import { listenerRoutes } from "./routes/v1/listeners.js";
import { eventDiffRoutes } from "./routes/v1/event-diff.js";
import { keyRoutes } from "./routes/v1/keys.js";
import { auditRoutes } from "./routes/v1/audit.js";
import { alertChannelRoutes } from "./routes/v1/alert-channels.js";
import { destinationTestRoutes } from "./routes/v1/destination-test.js";
import { redeliveryRoutes } from "./routes/v1/redeliveries.js";

/** Every operation the gateway answers: the router and the OpenAPI document are both made from it. */
export function gatewayRoutes(deps: GatewayDeps, options: GatewayOptions): Route[] {
  let document: Record<string, unknown> | undefined;
  const routes: Route[] = [
    ...systemRoutes(deps, () => (document ??= buildOpenApiDocument(routes, options))),
    ...endpointRoutes(deps, options),
    ...destinationTestRoutes(deps),
    ...eventRoutes(deps, options),
    ...eventActionRoutes(deps, options),
    ...forwardingRoutes(deps),
    ...redeliveryRoutes(deps),
    ...triggerRoutes(deps, options),
    ...eventSignatureRoutes(deps, options),
    ...eventDiffRoutes(deps),
    ...listenerRoutes(deps),
    ...schemaRoutes(deps),
    ...keyRoutes(deps),
    ...auditRoutes(deps),
    ...alertChannelRoutes(deps, options),
  ];
  return routes;
}

/** The /v1 REST surface: request id, trace span, access log, metrics, errors, auth and the key's rate, then the routes. */
export function createGatewayApp(deps: GatewayDeps, options: GatewayOptions): Koa {
  const app = new Koa({ proxy: false });
  app.silent = true;

  const metrics = options.metrics ?? createGatewayMetrics();
  const routes = gatewayRoutes(deps, options);
  // Case-sensitive, as the auth check below is: /V1/... is no route, never an unauthenticated one.
  const router = new Router({ sensitive: true });
  mountRoutes(router, routes);
  const openPaths = new Set(routes.filter((r) => r.open).map((r) => r.path));
  const auth = authenticate(deps.catalog);
  const rate = createKeyRateLimiter(options.quotas.apiRps, undefined, options.quotas.now);

  app.use(requestId());
  // Whose X-Forwarded-For names the caller in audit entries (audit.ts).
  const trustedProxies = options.trustedProxies ?? new Set<string>();
  app.use(function proxies(ctx, next) {
    ctx.state.trustedProxies = trustedProxies;
    return next();
  });
  app.use(untrustedContent());
  app.use(tracing());
  app.use(accessLog(deps.logger));
  app.use(metrics.middleware);
  app.use(errorHandler(deps.logger));
  // A refused key is never counted: the rate is taken once the key is known (ADR 0035).
  app.use(async function authUnlessOpen(ctx, next) {
    if (openPaths.has(ctx.path) || !(ctx.path === "/v1" || ctx.path.startsWith("/v1/"))) return next();
    return auth(ctx, () => {
      rate.take((ctx.state.auth as AuthState).keyId);
      return next();
    });
  });
  if (options.dashboardDir) app.use(dashboard(options.dashboardDir));
  app.use(router.routes());
  app.use(async function fallThrough(ctx) {
    // The path matched a route but not with this method: 405 with Allow; else 404.
    const matched = (ctx as { matched?: { methods: string[] }[] }).matched ?? [];
    const allowed = [...new Set(matched.flatMap((route) => route.methods))];
    if (allowed.length > 0) {
      throw new AppError("method_not_allowed", "method not allowed", { meta: { allow: allowed.join(", ") } });
    }
    throw new AppError("not_found", "no route");
  });
  return app;
}
