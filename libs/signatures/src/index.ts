export { PROVIDERS } from "./types.js";
export type { Provider, FailureReason, VerifyOutcome, VerifyInput, SignInput } from "./types.js";
export type { HeaderPair } from "./headers.js";
export { header } from "./headers.js";
export { detectProvider, verifySignature, standardWebhooksKey, DEFAULT_GENERIC_HEADER } from "./verify.js";
export { canonicalEventType, slackUrlVerificationChallenge } from "./event-type.js";
export { signHeaders, signatureHeaderNames } from "./sign.js";
