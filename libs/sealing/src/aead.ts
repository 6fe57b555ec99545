import { createCipheriv, createDecipheriv, randomFillSync } from "node:crypto";

const NONCE_BYTES = 12;
const TAG_BYTES = 16;

// Random nonces are drawn from the CSPRNG 4 KiB at a time: one call per 341 seals instead
// of one per seal. Each nonce is used once and the pool is never refilled in place while
// a nonce from it is in use (seal is synchronous).
const nonces = Buffer.alloc(NONCE_BYTES * 341);
let nextNonce = nonces.length;

function freshNonce(): Buffer {
  if (nextNonce + NONCE_BYTES > nonces.length) {
    randomFillSync(nonces);
    nextNonce = 0;
  }
  const nonce = nonces.subarray(nextNonce, nextNonce + NONCE_BYTES);
  nextNonce += NONCE_BYTES;
  return nonce;
}

/** AES-256-GCM: nonce || ciphertext || tag, with optional associated data. */
export function seal(key: Uint8Array, plaintext: Uint8Array, aad?: Uint8Array): Buffer {
  return sealParts(key, [plaintext], aad, "own");
}

/**
 * seal() of the parts one after another, without joining them first. `memory` "own" gives the
 * result memory of its own: a value posted to another thread as it is (a forward's sealed
 * excerpt, a wrapped key) would drag a pooled slice's whole 8 KiB pool along with it. "pooled"
 * is a slice of Node's pool, for a value every reader copies out (a capture's, which the append's
 * encoders copy into their hand-over): a buffer of its own cost 2 µs to allocate, a slice 0.1.
 */
function sealParts(key: Uint8Array, parts: readonly Uint8Array[], aad: Uint8Array | undefined, memory: "own" | "pooled"): Buffer {
  let length = 0;
  for (const part of parts) length += part.length;
  const size = NONCE_BYTES + length + TAG_BYTES;
  const out = memory === "own" ? Buffer.allocUnsafeSlow(size) : Buffer.allocUnsafe(size);
  const nonce = freshNonce();
  nonce.copy(out, 0);
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  if (aad) cipher.setAAD(aad);
  let at = NONCE_BYTES;
  for (const part of parts) at += cipher.update(part).copy(out, at);
  at += cipher.final().copy(out, at);
  cipher.getAuthTag().copy(out, at);
  return out;
}

/** Below this, the parts of sealJoined are copied into one plaintext: one cipher update is cheaper than a copy. */
const JOIN_BELOW_BYTES = 64 * 1024;

/**
 * Two values sealed as one (a capture's packed request and its body, ADR 0092): one AES-GCM
 * operation over `head`'s length (4 bytes, little-endian), `head`, then `tail`. openJoined
 * gives them back. The result is a slice of Node's pool (sealParts' "pooled"): a capture's
 * sealed value is copied by whatever hands it on.
 */
export function sealJoined(key: Uint8Array, head: Uint8Array, tail: Uint8Array, aad: Uint8Array): Buffer {
  const length = 4 + head.length + tail.length;
  if (length < JOIN_BELOW_BYTES) {
    const plaintext = Buffer.allocUnsafe(length);
    plaintext.writeUInt32LE(head.length, 0);
    plaintext.set(head, 4);
    plaintext.set(tail, 4 + head.length);
    return sealParts(key, [plaintext], aad, "pooled");
  }
  const prefix = Buffer.allocUnsafe(4 + head.length);
  prefix.writeUInt32LE(head.length, 0);
  prefix.set(head, 4);
  return sealParts(key, [prefix, tail], aad, "pooled");
}

/** The two values of a sealJoined plaintext (views on it); undefined when it is not one. */
export function openJoined(plaintext: Buffer): { head: Buffer; tail: Buffer } | undefined {
  if (plaintext.length < 4) return undefined;
  const headLength = plaintext.readUInt32LE(0);
  if (headLength > plaintext.length - 4) return undefined;
  return { head: plaintext.subarray(4, 4 + headLength), tail: plaintext.subarray(4 + headLength) };
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
