import { createPrivateKey, createPublicKey, sign as edSign, verify as edVerify, type KeyObject } from "node:crypto";
import { decodeHex } from "../crypto.js";
import { firstString } from "../event-fields.js";
import { hasHeader, header } from "../headers.js";
import { jsonFields, objectField } from "../json-fields.js";
import { topLevelNumber } from "../json-number.js";
import { malformedSignature, matched, missingSignature, unixSeconds } from "../outcome.js";
import type { ProviderScheme } from "../scheme.js";
import { bodyId } from "../delivery-id.js";

const SIGNATURE_HEADER = "X-Signature-Ed25519";
const TIMESTAMP_HEADER = "X-Signature-Timestamp";
const KEY_BYTES = 32;
const SIGNATURE_BYTES = 64;
/** DER prefixes that wrap a raw 32-byte Ed25519 key as SPKI (public) and PKCS#8 (private). */
const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");
const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

/** Discord's names for an interaction's numeric `type`. */
const INTERACTION_TYPES: Readonly<Record<number, string>> = {
  1: "PING",
  2: "APPLICATION_COMMAND",
  3: "MESSAGE_COMPONENT",
  4: "APPLICATION_COMMAND_AUTOCOMPLETE",
  5: "MODAL_SUBMIT",
};

const text = (bytes: Uint8Array) => Buffer.from(bytes).toString("utf8").trim();

/** The application's public key as the Developer Portal shows it: 64 hex digits. */
function publicKey(secret: Uint8Array): KeyObject | undefined {
  const raw = decodeHex(text(secret));
  return raw?.length === KEY_BYTES ? createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: "der", type: "spki" }) : undefined;
}

/**
 * A private key to re-sign with: a PKCS#8 PEM, or hex of the 32-byte seed or of the 64-byte
 * seed-and-public-key secret key that tweetnacl (Discord's own examples) uses.
 */
function privateKey(secret: Uint8Array): KeyObject | undefined {
  const value = text(secret);
  try {
    if (value.startsWith("-----BEGIN")) {
      const key = createPrivateKey(value);
      return key.asymmetricKeyType === "ed25519" ? key : undefined;
    }
    const raw = decodeHex(value);
    if (raw?.length !== KEY_BYTES && raw?.length !== 2 * KEY_BYTES) return undefined;
    return createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, raw.subarray(0, KEY_BYTES)]), format: "der", type: "pkcs8" });
  } catch {
    return undefined;
  }
}

/**
 * Discord interactions and webhook events: `X-Signature-Ed25519: <hex Ed25519 signature of
 * X-Signature-Timestamp + body>`, checked with the application's public key. Discord documents
 * no freshness window (discord-interactions' verifyKey checks none), so the timestamp is signed
 * but not judged. A signature without its timestamp header cannot be checked: malformed.
 */
export const discord: ProviderScheme = {
  name: "discord",
  signs: "hex Ed25519 signature of X-Signature-Timestamp + body, checked with the application's public key",
  label: "Discord",
  signatureHeaders: [SIGNATURE_HEADER, TIMESTAMP_HEADER],
  toleranceS: undefined,
  // An interaction's id; webhook events carry none.
  deliveryId: bodyId("id"),
  secretFormat: {
    description:
      "The application's Public Key (Developer Portal, General Information): 64 hex digits, not the client secret or bot token. To re-sign a replay toward your own test app, give the target secret as that app's Ed25519 private key (PKCS#8 PEM, or hex of the 32-byte seed).",
    example: "c8e3a5f6d4b2a1908f7e6d5c4b3a29180f1e2d3c4b5a69788796a5b4c3d2e1f0",
  },

  detect: (headers) => hasHeader(headers, SIGNATURE_HEADER),

  verify(input) {
    const value = header(input.headers, SIGNATURE_HEADER);
    if (value === undefined) return missingSignature();
    const timestamp = header(input.headers, TIMESTAMP_HEADER);
    const signature = decodeHex(value);
    if (!timestamp || signature?.length !== SIGNATURE_BYTES) return malformedSignature();
    const key = publicKey(input.secret);
    return matched(key !== undefined && edVerify(null, Buffer.concat([Buffer.from(timestamp), input.body]), key, signature));
  },

  /**
   * A webhook event's `event.type` (`APPLICATION_AUTHORIZED`), else the interaction's numeric
   * `type` by Discord's name for it (`APPLICATION_COMMAND`).
   */
  eventType(_headers, body) {
    const named = firstString(objectField(jsonFields(body, { event: { type: true } }), "event"), "type");
    if (named !== undefined) return named;
    const type = topLevelNumber(body, "type");
    return type === undefined ? undefined : INTERACTION_TYPES[type];
  },

  /**
   * Re-signing needs a private key, which only the target app's owner has: `secret` is read as
   * one (see privateKey). With anything else no signature is written, and the replay goes out
   * without the stale one. A public key pasted here is 64 hex digits like a seed, so it signs, but
   * with a key whose public half is some other one: the receiver will see a mismatch.
   */
  sign({ secret, body, nowMs }) {
    const key = privateKey(secret);
    if (key === undefined) return [];
    const timestamp = String(unixSeconds(nowMs));
    return [
      [SIGNATURE_HEADER, edSign(null, Buffer.concat([Buffer.from(timestamp), body]), key).toString("hex")],
      [TIMESTAMP_HEADER, timestamp],
    ];
  },

  signedHeaderNames: () => [SIGNATURE_HEADER.toLowerCase(), TIMESTAMP_HEADER.toLowerCase()],
};
