import { bytesEqual, hmac, prefixedHexDigest } from "../crypto.js";
import { firstString, formPayload, isForm, nonEmptyString } from "../event-fields.js";
import { hasHeader, header, type HeaderPair } from "../headers.js";
import { jsonFields, type FieldSpec, type Fields } from "../json-fields.js";
import { malformedSignature, matched, missingSignature } from "../outcome.js";
import type { ProviderScheme } from "../scheme.js";
import { headerId } from "../delivery-id.js";

const SIGNATURE_HEADER = "X-Hub-Signature-256";
/** SHA-1, sent alongside for old consumers. */
const LEGACY_SIGNATURE_HEADER = "X-Hub-Signature";
const EVENT_HEADER = "X-GitHub-Event";
const ACTION: FieldSpec = { action: true };

/**
 * GitHub sends JSON, or, for hooks configured with content type
 * application/x-www-form-urlencoded, a form whose `payload` field holds the same JSON.
 */
function payload(headers: readonly HeaderPair[], body: Uint8Array): Fields | undefined {
  return isForm(header(headers, "content-type")) ? formPayload(body, ACTION) : jsonFields(body, ACTION);
}

/**
 * `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, body)>`. The SHA-1 `X-Hub-Signature`
 * is not accepted on its own: it exists only for old consumers, and SHA-256 is always sent
 * alongside it.
 */
export const github: ProviderScheme = {
  name: "github",
  signs: "hex HMAC-SHA256 of the raw body (X-Hub-Signature-256: sha256=...)",
  label: "GitHub",
  signatureHeaders: [SIGNATURE_HEADER, LEGACY_SIGNATURE_HEADER],
  toleranceS: undefined,
  // Kept by a redelivery.
  deliveryId: headerId("X-GitHub-Delivery"),
  secretFormat: { description: "The Secret entered in the webhook's settings on GitHub (repository, organization or app), as typed there." },

  detect: (headers) => hasHeader(headers, EVENT_HEADER, SIGNATURE_HEADER),

  verify(input) {
    const value = header(input.headers, SIGNATURE_HEADER);
    if (value === undefined) return missingSignature();
    const digest = prefixedHexDigest(value, "sha256=");
    if (digest === undefined) return malformedSignature();
    return matched(bytesEqual(digest, hmac("sha256", input.secret, input.body)));
  },

  /** `pull_request.opened`: the event header, plus the body's action when it has one. */
  eventType(headers, body) {
    const event = nonEmptyString(header(headers, EVENT_HEADER));
    if (event === undefined) return undefined;
    const action = firstString(payload(headers, body), "action");
    return action === undefined ? event : `${event}.${action}`;
  },

  /** Both headers, since GitHub sends both and a receiver may check either. */
  sign: ({ secret, body }) => [
    [SIGNATURE_HEADER, `sha256=${hmac("sha256", secret, body).toString("hex")}`],
    [LEGACY_SIGNATURE_HEADER, `sha1=${hmac("sha1", secret, body).toString("hex")}`],
  ],

  signedHeaderNames: () => [SIGNATURE_HEADER.toLowerCase(), LEGACY_SIGNATURE_HEADER.toLowerCase()],
};
