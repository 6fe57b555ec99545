import { bytesEqual, decodeBase64, hmac, SHA256_BYTES } from "../crypto.js";
import { firstString } from "../event-fields.js";
import { hasHeader, header } from "../headers.js";
import { jsonFields } from "../json-fields.js";
import { malformedSignature, matched, missingSignature } from "../outcome.js";
import type { ProviderScheme } from "../scheme.js";
import { bodyId } from "../delivery-id.js";

const SIGNATURE_HEADER = "Typeform-Signature";
const PREFIX = "sha256=";

/**
 * `Typeform-Signature: sha256=<base64 HMAC-SHA256(secret, body)>`
 * (typeform.com/developers/webhooks/secure-your-webhooks).
 */
export const typeform: ProviderScheme = {
  name: "typeform",
  signs: "base64 HMAC-SHA256 of the raw body (Typeform-Signature: sha256=...)",
  label: "Typeform",
  signatureHeaders: [SIGNATURE_HEADER],
  toleranceS: undefined,
  deliveryId: bodyId("event_id"),
  secretFormat: { description: "The webhook's secret, as set in the form's Connect, Webhooks settings or with the Webhooks API (`secret`)." },

  detect: (headers) => hasHeader(headers, SIGNATURE_HEADER),

  verify(input) {
    const value = header(input.headers, SIGNATURE_HEADER);
    if (value === undefined) return missingSignature();
    const hasPrefix = value.slice(0, PREFIX.length).toLowerCase() === PREFIX;
    const digest = hasPrefix ? decodeBase64(value.slice(PREFIX.length)) : undefined;
    if (digest?.length !== SHA256_BYTES) return malformedSignature();
    return matched(bytesEqual(digest, hmac("sha256", input.secret, input.body)));
  },

  /** The body's `event_type`, `form_response` for every submission. */
  eventType: (_headers, body) => firstString(jsonFields(body, { event_type: true }), "event_type"),

  sign: ({ secret, body }) => [[SIGNATURE_HEADER, `${PREFIX}${hmac("sha256", secret, body).toString("base64")}`]],

  signedHeaderNames: () => [SIGNATURE_HEADER.toLowerCase()],
};
