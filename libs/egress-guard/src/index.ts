export { classifyAddress } from "./classify.js";
export type { AddressCategory } from "./classify.js";
export { parseTargetUrl, vetTarget, systemResolver } from "./target.js";
export type { ParsedTarget, Resolver, TargetRefusal, VetOptions, Vetted } from "./target.js";
export { createConnectionPool, sendOnce, failureOf, HOP_BY_HOP } from "./send.js";
export type { ConnectFunction, ConnectionPool, ConnectionPoolOptions, NetworkFailure, SendInput, SendResult } from "./send.js";
export { createEgressGuard, refusalReason } from "./guard.js";
export type { EgressGuard, EgressGuardOptions, InternalService, RefusalReason } from "./guard.js";
