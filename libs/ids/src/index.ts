export { isUuid, newId, uuidV7Time, UUID_PATTERN } from "./uuid.js";
