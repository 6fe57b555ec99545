export * from "./json.js";
