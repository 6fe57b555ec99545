import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** AES-256-GCM: nonce || ciphertext || tag, with optional associated data. */
export function seal(key: Uint8Array, plaintext: Uint8Array, aad?: Uint8Array): Buffer {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  if (aad) cipher.setAAD(aad);
  const body = cipher.update(plaintext);
  const final = cipher.final();
  return Buffer.concat([nonce, body, final, cipher.getAuthTag()]);
}

/** Throws when the key is wrong or the sealed bytes (or aad) were altered. */
export function open(key: Uint8Array, sealed: Uint8Array, aad?: Uint8Array): Buffer {
  if (sealed.length < NONCE_BYTES + TAG_BYTES) throw new Error("sealed value too short");
  const buf = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
  const nonce = buf.subarray(0, NONCE_BYTES);
  const tag = buf.subarray(buf.length - TAG_BYTES);
  const decipher = createDecipheriv("aes-256-gcm", key, nonce);
  if (aad) decipher.setAAD(aad);
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(buf.subarray(NONCE_BYTES, buf.length - TAG_BYTES)), decipher.final()]);
}
