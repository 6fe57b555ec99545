/**
 * Every /v1 JSON shape (zod schemas, types by z.infer) and the one typed client. Nothing here
 * imports Node: the dashboard bundles it. The server-side conversion from internal records is
 * `@whc/api-model/present`.
 */
export * from "./values.js";
export * from "./common.js";
export * from "./endpoints.js";
export * from "./events.js";
export * from "./event-actions.js";
export * from "./errors.js";
export * from "./providers.js";
export * from "./responses.js";
export * from "./forwarding.js";
export * from "./destination-filter.js";
export * from "./destinations.js";
export * from "./inbound.js";
export * from "./redaction.js";
export * from "./dedupe.js";
export * from "./diagnostic.js";
export * from "./receiving.js";
export * from "./headers.js";
export * from "./problems.js";
export * from "./listeners.js";
export * from "./event-signature.js";
export * from "./event-diff.js";
export * from "./config-file.js";
export * from "./scenario.js";
export * from "./schemas.js";
export * from "./body-shape.js";
export * from "./keys.js";
export * from "./audit.js";
export * from "./alerts.js";
export * from "./redeliveries.js";
export * from "./client.js";
