export type { CatalogStore } from "./ports.js";
export type * from "./types.js";
export { createCatalogService } from "./service.js";
export type { CatalogServiceOptions } from "./service.js";
export { createStamper } from "./ids.js";
export { translatingErrors } from "./translating-errors.js";
export { PATCHED_FIELDS, applyEndpointPatch, newEndpointRecord, patchedSecret, replacedFields, sequenceStatus } from "./endpoint-patch.js";
export type { ReplacedField } from "./endpoint-patch.js";
export { isUuid, newId, uuidV7Time, UUID_PATTERN } from "@whc/ids";
