import { signBodyHmac, verifyBodyHmac, type BodyHmac } from "../body-hmac.js";
import { firstString } from "../event-fields.js";
import { hasHeader } from "../headers.js";
import { jsonFields, objectField } from "../json-fields.js";
import type { ProviderScheme } from "../scheme.js";
import { bodyId } from "../delivery-id.js";

const SIGNATURE: BodyHmac = { header: "X-CC-Webhook-Signature", algorithm: "sha256", encoding: "hex", prefix: "" };

/**
 * `X-CC-Webhook-Signature: <hex HMAC-SHA256(shared secret, body)>`, no timestamp
 * (https://docs.cdp.coinbase.com/commerce/api-arcitecture/webhooks-security, the path misspelt as published).
 */
export const coinbaseCommerce: ProviderScheme = {
  name: "coinbase_commerce",
  signs: "hex HMAC-SHA256 of the raw body",
  label: "Coinbase Commerce",
  signatureHeaders: [SIGNATURE.header],
  toleranceS: undefined,
  // The event's id; the top-level id is the notification's.
  deliveryId: bodyId("event", "id"),
  secretFormat: { description: "The shared webhook secret (Coinbase Commerce, Settings, Notifications); not an API key." },

  detect: (headers) => hasHeader(headers, SIGNATURE.header),

  verify: (input) => verifyBodyHmac(input, SIGNATURE),

  /** `charge:confirmed`: the body's event.type. */
  eventType: (_headers, body) => firstString(objectField(jsonFields(body, { event: { type: true } }), "event"), "type"),

  sign: ({ secret, body }) => signBodyHmac(secret, body, SIGNATURE),

  signedHeaderNames: () => [SIGNATURE.header.toLowerCase()],
};
