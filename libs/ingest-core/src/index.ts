export { createIngestHandler, INGEST_MAX_HEADER_BYTES } from "./server.js";
export type { IngestDeps, IngestOptions } from "./server.js";
export { createAppendBatcher } from "./batcher.js";
export type { AppendBatcher, BatcherOptions } from "./batcher.js";
export { createEndpointCache } from "./endpoint-cache.js";
export type { EndpointCache, IngestEndpoint } from "./endpoint-cache.js";
export { verifyCapture } from "./verify.js";
export type { VerifyInput, VerifyResult, Verification } from "./verify.js";
export { rawHeaderPairs, remoteIpOf, readBodyThen, normaliseIp } from "./request.js";
