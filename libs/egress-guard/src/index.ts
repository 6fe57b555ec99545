export { classifyAddress } from "./classify.js";
export type { AddressCategory } from "./classify.js";
export { parseTargetUrl, vetTarget, systemResolver } from "./target.js";
export type { ParsedTarget, Resolver, TargetRefusal, VetOptions, Vetted } from "./target.js";
export { sendOnce } from "./send.js";
export type { NetworkFailure, SendInput, SendResult } from "./send.js";
