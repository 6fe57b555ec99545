import { signBodyHmac, verifyBodyHmac, type BodyHmac } from "../body-hmac.js";
import { nonEmptyString } from "../event-fields.js";
import { hasHeader, header } from "../headers.js";
import type { ProviderScheme } from "../scheme.js";
import { headerId } from "../delivery-id.js";

const SIGNATURE: BodyHmac = { header: "X-WC-Webhook-Signature", algorithm: "sha256", encoding: "base64", prefix: "" };
const TOPIC_HEADER = "X-WC-Webhook-Topic";
const SOURCE_HEADER = "X-WC-Webhook-Source";

/**
 * `X-WC-Webhook-Signature: <base64 HMAC-SHA256(secret, body)>`, no timestamp; WooCommerce's
 * WC_Webhook::generate_signature (https://woocommerce.github.io/woocommerce-rest-api-docs/#webhooks).
 */
export const woocommerce: ProviderScheme = {
  name: "woocommerce",
  signs: "base64 HMAC-SHA256 of the raw body",
  label: "WooCommerce",
  signatureHeaders: [SIGNATURE.header],
  toleranceS: undefined,
  deliveryId: headerId("X-WC-Webhook-Delivery-ID"),
  secretFormat: {
    description: "The webhook's Secret (WooCommerce, Settings, Advanced, Webhooks, or the REST API's secret field), as typed; not a REST API consumer key.",
  },

  detect: (headers) => hasHeader(headers, SIGNATURE.header, TOPIC_HEADER, SOURCE_HEADER),

  verify: (input) => verifyBodyHmac(input, SIGNATURE),

  /** `order.created`: the topic header. */
  eventType: (headers) => nonEmptyString(header(headers, TOPIC_HEADER)),

  sign: ({ secret, body }) => signBodyHmac(secret, body, SIGNATURE),

  signedHeaderNames: () => [SIGNATURE.header.toLowerCase()],
};
