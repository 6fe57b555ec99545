import { bytesEqual, decodeBase64, hmac, SHA256_BYTES } from "../crypto.js";
import { firstString } from "../event-fields.js";
import { hasHeader, header } from "../headers.js";
import { jsonFields } from "../json-fields.js";
import { malformedSignature, matched, missingSignature } from "../outcome.js";
import type { ProviderScheme } from "../scheme.js";
import { bodyId } from "../delivery-id.js";

/** Spelled as Square's documentation and its library spell it. */
const SIGNATURE_HEADER = "x-square-hmacsha256-signature";
/** Square's retired HMAC-SHA1 signature, still sent beside the SHA-256 one by older subscriptions: Square's alone. */
const LEGACY_SIGNATURE_HEADER = "x-square-signature";

/**
 * `x-square-hmacsha256-signature: <base64 HMAC-SHA256(signature key, notification URL + body)>`,
 * the URL exactly as configured on the subscription (Square's WebhooksHelper does no
 * normalisation, so neither do we). Without a known URL (`url` undefined) the body alone is
 * signed, which Square never sends, so such a capture can only fail with signature_mismatch.
 */
export const square: ProviderScheme = {
  name: "square",
  signs: "base64 HMAC-SHA256 of the notification URL followed by the raw body",
  label: "Square",
  /** The legacy SHA-1 header is listed, and replaced on re-signing, so that no stale signature rides beside a fresh one. */
  signatureHeaders: [SIGNATURE_HEADER, LEGACY_SIGNATURE_HEADER],
  toleranceS: undefined,
  deliveryId: bodyId("event_id"),
  secretFormat: {
    description:
      "The subscription's Signature Key (Developer Console, Webhooks, Subscriptions, the endpoint's details), not an access token. Verification also needs the ingest's public URL (WHC_INGEST_PUBLIC_URL): Square signs the notification URL.",
  },

  detect: (headers) => hasHeader(headers, SIGNATURE_HEADER, LEGACY_SIGNATURE_HEADER),

  verify(input) {
    const value = header(input.headers, SIGNATURE_HEADER);
    if (value === undefined) return missingSignature();
    const digest = decodeBase64(value);
    if (digest?.length !== SHA256_BYTES) return malformedSignature();
    return matched(bytesEqual(digest, hmac("sha256", input.secret, input.url ?? "", input.body)));
  },

  /** Square's event names are the body's `type` (`payment.updated`). */
  eventType: (_headers, body) => firstString(jsonFields(body, { type: true }), "type"),

  sign: ({ secret, body, url = "" }) => [[SIGNATURE_HEADER, hmac("sha256", secret, url, body).toString("base64")]],

  signedHeaderNames: () => [SIGNATURE_HEADER, LEGACY_SIGNATURE_HEADER],
};
