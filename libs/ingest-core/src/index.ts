// What ingest's consumers import: the composition wires the handler and its parts; the
// gateway and replay read replayDeadlineMs; the pieces benchmark times verifyCapture.
export { createIngestHandler, INGEST_MAX_HEADER_BYTES } from "./server.js";
export type { IngestDeps, IngestOptions } from "./server.js";
export { createParseErrorAnswers } from "./parse-errors.js";
export { traceCaptures } from "./tracing.js";
export { createAppendBatcher, BATCH_LINGER_MS } from "./batcher.js";
export type { AppendBatcher, BatcherOptions } from "./batcher.js";
export { createEndpointCache } from "./endpoint-cache.js";
export type { EndpointCache } from "./endpoint-cache.js";
export { createIngestMetrics } from "./metrics.js";
export type { IngestMetrics } from "./metrics.js";
export { verifyCapture } from "./verify.js";
export { compileRedactor, redact } from "./redact.js";
export { rawHeaderPairs } from "./request.js";
export { replayDeadlineMs } from "./proxy.js";
export { createRejectionCounter } from "./rejections.js";
export { bodyShape, bodyShapeText } from "./body-shape.js";
export { deduperOf } from "./dedupe.js";
export type { Deduper, DedupeInput } from "./dedupe.js";
export type { ShapeLimits } from "./body-shape.js";
