export { isUuid, newId, uuidV7At, uuidV7Seq, uuidV7Time, UUID_PATTERN } from "./uuid.js";
