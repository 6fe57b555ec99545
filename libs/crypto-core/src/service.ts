import { randomBytes } from "node:crypto";
import type { ServiceImpl } from "@connectrpc/connect";
import type { CryptoService } from "@whc/contracts";
import { AppError } from "@whc/errors";
import { unwrapKey, wrapKey, type KeyRing } from "./key-ring.js";

/**
 * The crypto service: issues data keys (plain and wrapped under the active master key),
 * unwraps them again, seals endpoint secrets, and hands the blind-index key to ingest and
 * the gateway. Bodies never come here.
 */
export function createCryptoService(ring: KeyRing): ServiceImpl<typeof CryptoService> {
  return {
    async issueDataKey() {
      const dataKey = randomBytes(32);
      const { wrapped, keyId } = wrapKey(ring, dataKey);
      return { plaintextKey: dataKey, wrappedKey: wrapped, keyId };
    },

    async unwrapDataKey(req) {
      try {
        const { dataKey, keyId } = unwrapKey(ring, req.wrappedKey);
        return { plaintextKey: dataKey, keyId };
      } catch (err) {
        // The key left the ring or the bytes were altered: the caller reports decryption
        // "failed" for that event, nothing more.
        throw new AppError("not_found", "data key cannot be unwrapped", { cause: err });
      }
    },

    async getBlindIndexKey() {
      return { key: ring.blindIndexKey };
    },

    async sealSecret(req) {
      return { sealed: wrapKey(ring, req.plaintext, "endpoint-secret").wrapped };
    },

    async openSecret(req) {
      try {
        return { plaintext: unwrapKey(ring, req.sealed, "endpoint-secret").dataKey };
      } catch (err) {
        throw new AppError("not_found", "secret cannot be opened", { cause: err });
      }
    },

    async listMasterKeys() {
      return { activeKeyId: ring.active.id, keyIds: [...ring.keys.keys()] };
    },
  };
}
