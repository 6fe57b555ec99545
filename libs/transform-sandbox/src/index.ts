export {
  toTransformRequest,
  fromTransformRequest,
  type TransformRequest,
  type CapturedRequestParts,
  type OutboundRequestParts,
} from "./request.js";
export { TransformSandbox, type TransformOutcome, type SandboxLimits, type SandboxOptions } from "./sandbox.js";
export { checkTransformSource, type TransformSourceCheck, type TransformSourceReason } from "./source-check.js";
export {
  MAX_SOURCE_BYTES,
  DEFAULT_CPU_MS,
  DEFAULT_MEMORY_BYTES,
  MAX_RESULT_BODY_BYTES,
  MAX_RESULT_JSON_BYTES,
  MAX_RESULT_HEADER_BYTES,
  MARSHAL_MS_PER_MIB,
  MARSHAL_MEMORY_PER_BYTE,
} from "./limits.js";
export { WORKER_BUNDLE } from "./worker-file.js";
