export { serveH2c, serverInterceptor, REQUEST_ID_HEADER } from "./server.js";
export type { H2cServer, ServeOptions } from "./server.js";
export { createPeerTransport, createServiceClient, clientInterceptor } from "./client.js";
export { createInMemoryTransport } from "./in-memory.js";
export { createHealthService, healthRoutes } from "./health.js";
export type { HealthChecks } from "./health.js";
export { tracingClientInterceptor, tracingServerInterceptor } from "./tracing.js";
export {
  checkInternalUrl,
  INTERNAL_AUTH_HEADER,
  internalAuthValue,
  loadInternalCredentials,
  requireInternalToken,
  sendInternalToken,
} from "./credentials.js";
export type { InternalCredentials, InternalCredentialSettings, InternalTls } from "./credentials.js";
export { CHECK_TIMEOUT_MS, createReadiness, peerServing, watchDependencies } from "./readiness.js";
export type { DependencyCheck, Readiness, ReadinessReport } from "./readiness.js";
