import { bytesEqual, decodeHex, hmac } from "../crypto.js";
import { firstString } from "../event-fields.js";
import { header } from "../headers.js";
import { jsonFields } from "../json-fields.js";
import { malformedSignature, matched, missingSignature } from "../outcome.js";
import type { ProviderScheme } from "../scheme.js";
import { bodyId } from "../delivery-id.js";

const SIGNATURE_HEADER = "X-Hub-Signature";
const PREFIX = "sha1=";
const SHA1_BYTES = 20;

/**
 * `X-Hub-Signature: sha1=<hex HMAC-SHA1(client secret, body)>` (developers.intercom.com,
 * "Signed notifications" in the webhooks documentation).
 *
 * Not detected: Intercom sends nothing of its own besides a User-Agent, and X-Hub-Signature is
 * also GitHub's (its SHA-1 header, the same format) and Bitbucket's. An endpoint receiving
 * Intercom's webhooks has the provider configured.
 */
export const intercom: ProviderScheme = {
  name: "intercom",
  signs: "hex HMAC-SHA1 of the raw body (X-Hub-Signature: sha1=...)",
  label: "Intercom",
  signatureHeaders: [SIGNATURE_HEADER],
  toleranceS: undefined,
  // The notification's id (notif_...).
  deliveryId: bodyId("id"),
  secretFormat: { description: "The app's client secret, from the Developer Hub (your app, Configure, Basic information); not an access token." },

  detect: () => false,

  verify(input) {
    const value = header(input.headers, SIGNATURE_HEADER);
    if (value === undefined) return missingSignature();
    const hasPrefix = value.slice(0, PREFIX.length).toLowerCase() === PREFIX;
    const digest = hasPrefix ? decodeHex(value.slice(PREFIX.length)) : undefined;
    if (digest?.length !== SHA1_BYTES) return malformedSignature();
    return matched(bytesEqual(digest, hmac("sha1", input.secret, input.body)));
  },

  /** The notification's `topic`, e.g. `conversation.user.created`. */
  eventType: (_headers, body) => firstString(jsonFields(body, { topic: true }), "topic"),

  sign: ({ secret, body }) => [[SIGNATURE_HEADER, `${PREFIX}${hmac("sha1", secret, body).toString("hex")}`]],

  signedHeaderNames: () => [SIGNATURE_HEADER.toLowerCase()],
};
