import { signBodyHmac, verifyBodyHmac, type BodyHmac } from "../body-hmac.js";
import { firstString } from "../event-fields.js";
import { hasHeader } from "../headers.js";
import { jsonFields } from "../json-fields.js";
import type { ProviderScheme } from "../scheme.js";
import { bodyId } from "../delivery-id.js";

const SIGNATURE: BodyHmac = { header: "x-vercel-signature", algorithm: "sha1", encoding: "hex", prefix: "" };

/**
 * `x-vercel-signature: <hex HMAC-SHA1(secret, body)>`, no timestamp
 * (https://vercel.com/docs/observability/webhooks).
 */
export const vercel: ProviderScheme = {
  name: "vercel",
  signs: "hex HMAC-SHA1 of the raw body",
  label: "Vercel",
  signatureHeaders: [SIGNATURE.header],
  toleranceS: undefined,
  // The event's id.
  deliveryId: bodyId("id"),
  secretFormat: {
    description:
      "The webhook's secret, shown once when it is created under the team's Settings, Webhooks; for an integration's webhooks, the integration's Client Secret.",
  },

  detect: (headers) => hasHeader(headers, SIGNATURE.header),

  verify: (input) => verifyBodyHmac(input, SIGNATURE),

  /** `deployment.created`: the body's top-level type. */
  eventType: (_headers, body) => firstString(jsonFields(body, { type: true }), "type"),

  sign: ({ secret, body }) => signBodyHmac(secret, body, SIGNATURE),

  signedHeaderNames: () => [SIGNATURE.header],
};
