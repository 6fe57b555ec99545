import { bytesEqual, hmac, prefixedHexDigest } from "../crypto.js";
import { firstString } from "../event-fields.js";
import { header } from "../headers.js";
import { jsonFields, type FieldSpec } from "../json-fields.js";
import { malformedSignature, matched, missingSignature } from "../outcome.js";
import type { ProviderScheme } from "../scheme.js";

export const DEFAULT_GENERIC_HEADER = "X-Signature";

const EVENT: FieldSpec = { type: true, event: true, eventType: true };

/** The configured signature header; an empty setting means "not configured". */
function headerName(configured: string | undefined): string {
  const name = configured?.trim();
  return name ? name : DEFAULT_GENERIC_HEADER;
}

/**
 * `<configured header>: <prefix><hex HMAC-SHA256(secret, body)>`. The digest may be in either
 * hex case and the prefix is matched case-insensitively, since senders differ on both. The
 * fallback for senders no other scheme describes, so it is never detected from headers.
 */
export const generic: ProviderScheme = {
  name: "generic",
  signs: "hex HMAC-SHA256 of the raw body, in the configured header after the configured prefix",
  label: "Generic HMAC-SHA256",
  signatureHeaders: [DEFAULT_GENERIC_HEADER],
  toleranceS: undefined,
  // A generic sender has no id of its own: deduplicate its captures by `fields`.
  deliveryId: undefined,
  secretFormat: {
    description: "The secret the sender signs with, as typed: its UTF-8 bytes are the HMAC-SHA256 key. The header and digest prefix are set on the endpoint.",
  },

  detect: () => false,

  verify(input) {
    const value = header(input.headers, headerName(input.genericSignatureHeader));
    if (value === undefined) return missingSignature();
    const digest = prefixedHexDigest(value, input.genericSignaturePrefix ?? "");
    if (digest === undefined) return malformedSignature();
    return matched(bytesEqual(digest, hmac("sha256", input.secret, input.body)));
  },

  eventType: (_headers, body) => firstString(jsonFields(body, EVENT), "type", "event", "eventType"),

  sign: ({ secret, body, genericSignatureHeader, genericSignaturePrefix }) => [
    [headerName(genericSignatureHeader), `${genericSignaturePrefix ?? ""}${hmac("sha256", secret, body).toString("hex")}`],
  ],

  signedHeaderNames: ({ genericSignatureHeader }) => [headerName(genericSignatureHeader).toLowerCase()],
};
