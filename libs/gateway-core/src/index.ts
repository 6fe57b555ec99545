export { createGatewayApp, gatewayRoutes } from "./app.js";
export type { GatewayDeps, GatewayMetrics, GatewayOptions } from "./deps.js";
export { createGatewayMetrics } from "./middleware/metrics.js";
export { errorTable } from "./errors-table.js";
export { buildOpenApiDocument } from "./openapi.js";
export type { Route } from "./route.js";
export { createKeyRateLimiter, createKeySlots } from "./key-quotas.js";
