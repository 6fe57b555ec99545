export * from "./specs.js";
export * from "./nodes.js";
export { runMain, serveHttp } from "./process.js";
export type { Closeable, HttpServer } from "./process.js";
export { startAllInOne } from "./all-in-one.js";
export { internalCredentials, peersOf, serveInternal } from "./internal.js";
export { processMetrics, serveMetrics } from "./metrics-port.js";
export type { AllInOne } from "./all-in-one.js";
