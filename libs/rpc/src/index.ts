export { serveH2c, serverInterceptor, REQUEST_ID_HEADER } from "./server.js";
export type { H2cServer, ServeOptions } from "./server.js";
export { createPeerTransport, createServiceClient, clientInterceptor } from "./client.js";
export { createInMemoryTransport } from "./in-memory.js";
export { createHealthService, healthRoutes } from "./health.js";
export type { HealthChecks } from "./health.js";
export { tracingClientInterceptor, tracingServerInterceptor } from "./tracing.js";
