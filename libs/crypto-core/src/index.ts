export { loadKeyRing, createKeyRing, wrapKey, unwrapKey, wrappedKeyId } from "./key-ring.js";
export type { KeyRing, MasterKey, KeyRingSource, WrapPurpose } from "./key-ring.js";
export { createCryptoService } from "./service.js";
