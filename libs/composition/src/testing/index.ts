/** Test support: the whole system on free loopback ports. Only tests import this entry point. */
export { startTestSystem, KEY_A, KEY_B } from "./test-system.js";
export type { TestSystem } from "./test-system.js";
export { startDestination, type ReceivedRequest, type TestDestination } from "./destination.js";
