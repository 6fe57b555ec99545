export { openMongoStore } from "./mongo-store.js";
export type { MongoStoreOptions } from "./mongo-store.js";
export * from "./documents.js";
export * from "./delivery-documents.js";
