export { classifyAddress } from "./classify.js";
export type { AddressCategory } from "./classify.js";
export { parseTargetUrl, vetTarget, systemResolver } from "./target.js";
export type { ParsedTarget, Resolver, TargetRefusal, VetOptions, Vetted } from "./target.js";
export { sendOnce, HOP_BY_HOP } from "./send.js";
export type { NetworkFailure, SendInput, SendResult } from "./send.js";
