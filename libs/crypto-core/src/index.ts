export { seal, open } from "./aead.js";
export { loadKeyRing, createKeyRing, wrapKey, unwrapKey, wrappedKeyId } from "./key-ring.js";
export type { KeyRing, MasterKey, KeyRingSource, WrapPurpose } from "./key-ring.js";
export { blindTokens, createBlindIndexer, words, TOKEN_BYTES, MAX_TOKENS_PER_BODY } from "./blind-index.js";
export type { BlindIndexer } from "./blind-index.js";
export { createCryptoService } from "./service.js";
export { createEnvelopeSealer, createEnvelopeOpener, createBlindIndexSource } from "./envelope.js";
export type { EnvelopeSealer, EnvelopeOpener, SealedBodyParts, SealerOptions, OpenResult, BlindIndexSource } from "./envelope.js";
