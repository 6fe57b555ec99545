import { bytesEqual, decodeBase64, hmac, SHA256_BYTES } from "../crypto.js";
import { nonEmptyString } from "../event-fields.js";
import { hasHeader, header } from "../headers.js";
import { malformedSignature, matched, missingSignature } from "../outcome.js";
import type { ProviderScheme } from "../scheme.js";
import { headerId } from "../delivery-id.js";

const SIGNATURE_HEADER = "X-Shopify-Hmac-Sha256";
const TOPIC_HEADER = "X-Shopify-Topic";

/** `X-Shopify-Hmac-Sha256: <base64 HMAC-SHA256(secret, body)>`. */
export const shopify: ProviderScheme = {
  name: "shopify",
  signs: "base64 HMAC-SHA256 of the raw body",
  label: "Shopify",
  signatureHeaders: [SIGNATURE_HEADER],
  toleranceS: undefined,
  deliveryId: headerId("X-Shopify-Webhook-Id"),
  secretFormat: {
    description:
      "The app's client secret (Partner Dashboard or Dev Dashboard); for webhooks created in the store admin, the key shown under Settings, Notifications, Webhooks.",
  },

  detect: (headers) => hasHeader(headers, SIGNATURE_HEADER, TOPIC_HEADER),

  verify(input) {
    const value = header(input.headers, SIGNATURE_HEADER);
    if (value === undefined) return missingSignature();
    const digest = decodeBase64(value);
    if (digest?.length !== SHA256_BYTES) return malformedSignature();
    return matched(bytesEqual(digest, hmac("sha256", input.secret, input.body)));
  },

  eventType: (headers) => nonEmptyString(header(headers, TOPIC_HEADER)),

  sign: ({ secret, body }) => [[SIGNATURE_HEADER, hmac("sha256", secret, body).toString("base64")]],

  signedHeaderNames: () => [SIGNATURE_HEADER.toLowerCase()],
};
