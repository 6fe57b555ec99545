import { signBodyHmac, verifyBodyHmac, type BodyHmac } from "../body-hmac.js";
import { firstString } from "../event-fields.js";
import { hasHeader, header } from "../headers.js";
import { jsonFields } from "../json-fields.js";
import type { ProviderScheme } from "../scheme.js";

const SIGNATURE: BodyHmac = { header: "X-Hub-Signature-256", algorithm: "sha256", encoding: "hex", prefix: "sha256=" };
/** SHA-1, still sent alongside for old consumers, as GitHub does. */
const LEGACY_SIGNATURE: BodyHmac = { header: "X-Hub-Signature", algorithm: "sha1", encoding: "hex", prefix: "sha1=" };
/** The user agent of Meta's webhook deliveries (Facebook, Instagram, WhatsApp, Messenger). */
const META_USER_AGENT = "facebookexternalua";

/**
 * Meta app webhooks (Graph API, WhatsApp Cloud API, Instagram, Messenger):
 * `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(app secret, body)>`, no timestamp
 * (https://developers.facebook.com/docs/graph-api/webhooks/getting-started#validate-payloads).
 * As with GitHub, the SHA-1 header is not accepted on its own.
 */
export const meta: ProviderScheme = {
  name: "meta",
  signs: "hex HMAC-SHA256 of the raw body (X-Hub-Signature-256: sha256=...)",
  label: "Meta (Facebook, WhatsApp, Instagram)",
  signatureHeaders: [SIGNATURE.header, LEGACY_SIGNATURE.header],
  toleranceS: undefined,
  // Meta batches changes in `entry`, without an id of the delivery.
  deliveryId: undefined,
  secretFormat: {
    description: "The App Secret (Meta App Dashboard, App settings, Basic), 32 hex characters; not the webhook's Verify Token or an access token.",
    example: "a1b2c3d4e5f60718293a4b5c6d7e8f90",
  },

  /**
   * The signature header is GitHub's too, so it names nobody: Meta is recognised by its user
   * agent, and never when X-GitHub-Event is there. Every other X-Hub-Signature-256 sender is
   * left to the endpoint's configured provider.
   */
  detect: (headers) =>
    !hasHeader(headers, "X-GitHub-Event") && (header(headers, "user-agent")?.toLowerCase().startsWith(META_USER_AGENT) ?? false),

  verify: (input) => verifyBodyHmac(input, SIGNATURE),

  /** `whatsapp_business_account`, `page`, `instagram`: the body's top-level object. */
  eventType: (_headers, body) => firstString(jsonFields(body, { object: true }), "object"),

  /** Both headers, since Meta sends both and a receiver may check either. */
  sign: ({ secret, body }) => [...signBodyHmac(secret, body, SIGNATURE), ...signBodyHmac(secret, body, LEGACY_SIGNATURE)],

  signedHeaderNames: () => [SIGNATURE.header.toLowerCase(), LEGACY_SIGNATURE.header.toLowerCase()],
};
