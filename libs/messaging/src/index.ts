export type { CaptureBus, CaptureNotice, Unsubscribe } from "./ports.js";
export { captureSubject, ENDPOINT_CHANGED_SUBJECT } from "./ports.js";
export { createMemoryBus } from "./memory-bus.js";
export { createNatsConnection } from "./nats-connection.js";
export type { NatsHandle } from "./nats-connection.js";
export { createNatsBus } from "./nats-bus.js";
export { createMemoryLeases, createNatsLeases, originHash, LEASE_BUCKET } from "./leases.js";
export type { EgressLease, EgressLeases } from "./leases.js";
