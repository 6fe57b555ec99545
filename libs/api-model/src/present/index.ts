export * from "./json.js";
export * from "./listeners.js";
