import { signBodyHmac, verifyBodyHmac, type BodyHmac } from "../body-hmac.js";
import { firstString, nonEmptyString } from "../event-fields.js";
import { hasHeader, header } from "../headers.js";
import { jsonFields } from "../json-fields.js";
import type { ProviderScheme } from "../scheme.js";
import { headerId } from "../delivery-id.js";

const SIGNATURE: BodyHmac = { header: "Sentry-Hook-Signature", algorithm: "sha256", encoding: "hex", prefix: "" };
const RESOURCE_HEADER = "Sentry-Hook-Resource";
/** Sent, but not signed: Sentry's signature covers the body alone. */
const TIMESTAMP_HEADER = "Sentry-Hook-Timestamp";

/**
 * Sentry integration-platform webhooks: `Sentry-Hook-Signature: <hex HMAC-SHA256(client secret,
 * body)>` (https://docs.sentry.io/integrations/integration-platform/webhooks/).
 * Sentry-Hook-Timestamp is not part of what is signed, so no freshness can be checked.
 */
export const sentry: ProviderScheme = {
  name: "sentry",
  signs: "hex HMAC-SHA256 of the raw body",
  label: "Sentry",
  signatureHeaders: [SIGNATURE.header],
  toleranceS: undefined,
  deliveryId: headerId("Request-ID"),
  secretFormat: {
    description:
      "The integration's Client Secret (Settings, Developer Settings, the internal or public integration's Credentials); not its token or Client ID.",
  },

  detect: (headers) => hasHeader(headers, SIGNATURE.header, RESOURCE_HEADER, TIMESTAMP_HEADER),

  verify: (input) => verifyBodyHmac(input, SIGNATURE),

  /** `issue.created`: the resource header, plus the body's action when it has one. */
  eventType(headers, body) {
    const resource = nonEmptyString(header(headers, RESOURCE_HEADER));
    if (resource === undefined) return undefined;
    const action = firstString(jsonFields(body, { action: true }), "action");
    return action === undefined ? resource : `${resource}.${action}`;
  },

  sign: ({ secret, body }) => signBodyHmac(secret, body, SIGNATURE),

  signedHeaderNames: () => [SIGNATURE.header.toLowerCase()],
};
