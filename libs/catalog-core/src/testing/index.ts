export { catalogStoreContract } from "./contract-suite.js";
export type { ContractOptions } from "./contract-suite.js";
export { endpointFixture, eventFixture, keyHash, token } from "./fixtures.js";
