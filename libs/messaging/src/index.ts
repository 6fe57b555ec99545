/** Adapters of the shared ports of @whc/ports: the capture bus and egress leases, in process or over NATS. */
export { createMemoryBus } from "./memory-bus.js";
export { createNatsConnection } from "./nats-connection.js";
export type { NatsHandle } from "./nats-connection.js";
export { createNatsBus } from "./nats-bus.js";
export { createMemoryLeases, createNatsLeases, originHash, LEASE_BUCKET } from "./leases.js";
