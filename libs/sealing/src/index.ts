/**
 * What every reader and writer of captures shares: AES-256-GCM sealing, the envelope sealer
 * and opener (data keys from the crypto service, cached), the packed form of a capture's
 * request (headers, sub-path, query) sealed beside its body, and the search blind index. The
 * master keys and the crypto service itself stay in @whc/crypto-core.
 */
export { seal, open } from "./aead.js";
export { blindTokens, createBlindIndexer, words, packSearchTokens, unpackSearchTokens, TOKEN_BYTES, MAX_TOKENS_PER_BODY } from "./blind-index.js";
export type { BlindIndexer } from "./blind-index.js";
export { createEnvelopeSealer, createEnvelopeOpener, createBlindIndexSource, createDedupeHasher, sealedText, sealedTextBytes, sealedWithBody, SEALED_TEXT_PREFIX } from "./envelope.js";
export type { EnvelopeSealer, EnvelopeOpener, SealedBodyParts, SealedCapture, CaptureParts, SealedPart, SealerOptions, OpenResult, BlindIndexSource, DedupeHasher } from "./envelope.js";
export { packRequest, unpackRequest, openCapture, sealUrlFor } from "./request-envelope.js";
export type { CapturedRequest, CaptureDecryption, OpenedCapture, RequestHeaderPair } from "./request-envelope.js";
export { withSealedParts } from "./capture.js";
