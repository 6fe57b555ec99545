export * from "./filter-table.js";
