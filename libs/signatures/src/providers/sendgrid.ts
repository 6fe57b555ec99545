import { createPrivateKey, createPublicKey, sign as ecSign, verify as ecVerify, type KeyObject } from "node:crypto";
import { decodeBase64 } from "../crypto.js";
import { firstString } from "../event-fields.js";
import { hasHeader, header } from "../headers.js";
import { jsonFields } from "../json-fields.js";
import { malformedSignature, matched, missingSignature, unixSeconds } from "../outcome.js";
import type { ProviderScheme } from "../scheme.js";

const SIGNATURE_HEADER = "X-Twilio-Email-Event-Webhook-Signature";
const TIMESTAMP_HEADER = "X-Twilio-Email-Event-Webhook-Timestamp";
const CURVE = "prime256v1";

const text = (bytes: Uint8Array) => Buffer.from(bytes).toString("utf8").trim();

function isP256(key: KeyObject): boolean {
  return key.asymmetricKeyType === "ec" && key.asymmetricKeyDetails?.namedCurve === CURVE;
}

/**
 * SendGrid's verification key as its settings show it: base64 of the SPKI DER. A PEM is read too;
 * a private key PEM verifies with its public half.
 */
function publicKey(secret: Uint8Array): KeyObject | undefined {
  const value = text(secret);
  try {
    let key: KeyObject;
    if (value.startsWith("-----BEGIN")) key = createPublicKey(value);
    else {
      const der = decodeBase64(value.replace(/\s+/g, ""));
      if (der === undefined) return undefined;
      key = createPublicKey({ key: der, format: "der", type: "spki" });
    }
    return isP256(key) ? key : undefined;
  } catch {
    return undefined;
  }
}

/** A P-256 private key to re-sign with: PEM (PKCS#8 or SEC1 "EC PRIVATE KEY"), or base64 of the PKCS#8 DER. */
function privateKey(secret: Uint8Array): KeyObject | undefined {
  const value = text(secret);
  try {
    let key: KeyObject;
    if (value.startsWith("-----BEGIN")) key = createPrivateKey(value);
    else {
      const der = decodeBase64(value.replace(/\s+/g, ""));
      if (der === undefined) return undefined;
      key = createPrivateKey({ key: der, format: "der", type: "pkcs8" });
    }
    return isP256(key) ? key : undefined;
  } catch {
    return undefined;
  }
}

/**
 * SendGrid's Signed Event Webhook: `X-Twilio-Email-Event-Webhook-Signature: <base64 DER ECDSA
 * P-256 SHA-256 signature of X-Twilio-Email-Event-Webhook-Timestamp + body>`, checked with the
 * public key SendGrid shows. SendGrid documents no freshness window and its libraries check
 * none, so the timestamp is signed but not judged. A signature without its timestamp header
 * cannot be checked: malformed.
 */
export const sendgrid: ProviderScheme = {
  name: "sendgrid",
  signs: "base64 ECDSA P-256 SHA-256 signature (DER) of the timestamp header + body, checked with SendGrid's public key",
  label: "SendGrid",
  signatureHeaders: [SIGNATURE_HEADER, TIMESTAMP_HEADER],
  toleranceS: undefined,
  // SendGrid batches events in one array (each with its own sg_event_id): no id of the delivery.
  deliveryId: undefined,
  secretFormat: {
    description:
      "The Signed Event Webhook's verification key (Settings, Mail Settings, Event Webhook, Signature Verification; public_key in the API): base64 starting MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE, not an API key (SG.). To re-sign a replay toward your own test app, give the target secret as a P-256 private key (PEM, or base64 PKCS#8 DER).",
    example: "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE…",
  },

  detect: (headers) => hasHeader(headers, SIGNATURE_HEADER),

  verify(input) {
    const value = header(input.headers, SIGNATURE_HEADER);
    if (value === undefined) return missingSignature();
    const timestamp = header(input.headers, TIMESTAMP_HEADER);
    const signature = decodeBase64(value);
    if (!timestamp || signature === undefined) return malformedSignature();
    const key = publicKey(input.secret);
    let ok = false;
    try {
      ok = key !== undefined && ecVerify("sha256", Buffer.concat([Buffer.from(timestamp), input.body]), { key, dsaEncoding: "der" }, signature);
    } catch {
      // Bytes that are not a DER signature are a signature that does not match.
    }
    return matched(ok);
  },

  /**
   * The body is a JSON array of events, usually of several kinds; the first event's `event`
   * (`delivered`, `open`) names the batch. It is read without parsing the array.
   */
  eventType(_headers, body) {
    let i = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
    while (body[i] === 0x20 || body[i] === 0x0a || body[i] === 0x0d || body[i] === 0x09) i += 1;
    if (body[i] !== 0x5b) return firstString(jsonFields(body, { event: true }), "event");
    return firstString(jsonFields(body.subarray(i + 1), { event: true }), "event");
  },

  /**
   * Re-signing needs a private key, which only the target app's owner has: `secret` is read as
   * one (see privateKey). With anything else no signature is written, and the replay goes out
   * without the stale one.
   */
  sign({ secret, body, nowMs }) {
    const key = privateKey(secret);
    if (key === undefined) return [];
    const timestamp = String(unixSeconds(nowMs));
    return [
      [SIGNATURE_HEADER, ecSign("sha256", Buffer.concat([Buffer.from(timestamp), body]), { key, dsaEncoding: "der" }).toString("base64")],
      [TIMESTAMP_HEADER, timestamp],
    ];
  },

  signedHeaderNames: () => [SIGNATURE_HEADER.toLowerCase(), TIMESTAMP_HEADER.toLowerCase()],
};
