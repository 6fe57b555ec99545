export * from "./filter.js";
