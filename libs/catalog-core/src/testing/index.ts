export { catalogStoreContract } from "./contract-suite.js";
export type { ContractOptions } from "./contract-suite.js";
export type { ContractContext } from "./endpoint-contract.js";
export { auditFixture, endpointFixture, eventFixture, forwardAttemptFixture, keyHash, listAllPages, token } from "./fixtures.js";
export { INVOICE, shapeText } from "./schema-contract.js";
