import Koa from "koa";
import Router from "@koa/router";
import type { Client } from "@connectrpc/connect";
import type { Health } from "@whc/contracts";
import { AppError } from "@whc/errors";
import type { GatewayDeps, GatewayOptions } from "./deps.js";
import { requestId } from "./middleware/request-id.js";
import { errorHandler } from "./middleware/errors.js";
import { authenticate } from "./middleware/auth.js";
import { accessLog } from "./middleware/access-log.js";
import { endpointRoutes } from "./routes/v1/endpoints.js";
import { eventRoutes } from "./routes/v1/events.js";
import { buildOpenApiDocument } from "./openapi.js";
import { eventActionRoutes } from "./routes/v1/event-actions.js";
import { createMetrics } from "./middleware/metrics.js";
import { dashboard } from "./middleware/dashboard.js";

async function serving(client: Client<typeof Health>): Promise<boolean> {
  try {
    return (await client.check({ service: "" }, { timeoutMs: 2000 })).status === 1;
  } catch {
    return false;
  }
}

/** Paths answered without credentials. */
const OPEN_PATHS = new Set(["/healthz", "/metrics", "/v1/openapi.json"]);

/** The /v1 REST surface: request id, errors, access log, auth, then the routes. */
export function createGatewayApp(deps: GatewayDeps, options: GatewayOptions): Koa {
  const app = new Koa({ proxy: false });
  app.silent = true;

  const router = new Router();
  const metrics = createMetrics();
  router.get("/metrics", async (ctx) => {
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  });
  router.get("/healthz", async (ctx) => {
    const [catalog, crypto, replay] = await Promise.all([
      serving(deps.health.catalog),
      serving(deps.health.crypto),
      serving(deps.health.replay),
    ]);
    const ok = catalog && crypto && replay;
    ctx.status = ok ? 200 : 503;
    ctx.body = {
      status: ok ? "ok" : "unavailable",
      checks: {
        catalog: catalog ? "ok" : "down",
        crypto: crypto ? "ok" : "down",
        replay: replay ? "ok" : "down",
        bus: deps.bus.connected() ? "ok" : "down",
      },
    };
  });
  const openApi = buildOpenApiDocument();
  router.get("/v1/openapi.json", (ctx) => {
    ctx.body = openApi;
  });
  endpointRoutes(router, deps, options);
  eventRoutes(router, deps, options);
  eventActionRoutes(router, deps, options);

  const auth = authenticate(deps.catalog);

  app.use(requestId());
  app.use(accessLog(deps.logger));
  app.use(metrics.middleware);
  app.use(errorHandler(deps.logger));
  app.use(async function authUnlessOpen(ctx, next) {
    if (OPEN_PATHS.has(ctx.path) || !(ctx.path === "/v1" || ctx.path.startsWith("/v1/"))) return next();
    return auth(ctx, next);
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
