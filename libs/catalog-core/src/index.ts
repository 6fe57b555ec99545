export type { CatalogStore } from "./ports.js";
export type * from "./types.js";
export { createCatalogService } from "./service.js";
export type { CatalogServiceOptions } from "./service.js";
export { createStamper, isUuid, newId, uuidV7Time, UUID_PATTERN } from "./ids.js";
