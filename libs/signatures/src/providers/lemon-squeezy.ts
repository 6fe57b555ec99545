import { signBodyHmac, verifyBodyHmac, type BodyHmac } from "../body-hmac.js";
import { firstString, nonEmptyString } from "../event-fields.js";
import { hasHeader, header } from "../headers.js";
import { jsonFields, objectField } from "../json-fields.js";
import type { ProviderScheme } from "../scheme.js";

const SIGNATURE: BodyHmac = { header: "X-Signature", algorithm: "sha256", encoding: "hex", prefix: "" };
const EVENT_HEADER = "X-Event-Name";

/**
 * `X-Signature: <hex HMAC-SHA256(signing secret, body)>`, no timestamp
 * (https://docs.lemonsqueezy.com/help/webhooks/signing-requests).
 */
export const lemonSqueezy: ProviderScheme = {
  name: "lemon_squeezy",
  signs: "hex HMAC-SHA256 of the raw body",
  label: "Lemon Squeezy",
  signatureHeaders: [SIGNATURE.header],
  toleranceS: undefined,
  // Lemon Squeezy sends no id of the delivery or of the event (data.id is the resource's).
  deliveryId: undefined,
  secretFormat: {
    description: "The signing secret typed when the webhook was created (Settings, Webhooks), 6 to 40 characters of your choosing; not an API key.",
  },

  /**
   * X-Signature alone is the generic scheme's default header and many senders use it, so only the
   * pair of it and X-Event-Name (both always sent by Lemon Squeezy) names the sender.
   */
  detect: (headers) => hasHeader(headers, EVENT_HEADER) && hasHeader(headers, SIGNATURE.header),

  verify: (input) => verifyBodyHmac(input, SIGNATURE),

  /** `order_created`: the event header, else the body's meta.event_name. */
  eventType: (headers, body) =>
    nonEmptyString(header(headers, EVENT_HEADER)) ?? firstString(objectField(jsonFields(body, { meta: { event_name: true } }), "meta"), "event_name"),

  sign: ({ secret, body }) => signBodyHmac(secret, body, SIGNATURE),

  signedHeaderNames: () => [SIGNATURE.header.toLowerCase()],
};
