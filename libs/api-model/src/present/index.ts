export * from "./json.js";
export * from "./listeners.js";
export * from "./keys.js";
export * from "./audit.js";
export * from "./alerts.js";
export * from "./schemas.js";
export * from "./redeliveries.js";
