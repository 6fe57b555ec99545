import { bytesEqual, hmac, prefixedHexDigest } from "../crypto.js";
import { nonEmptyString } from "../event-fields.js";
import { hasHeader, header } from "../headers.js";
import { malformedSignature, matched, missingSignature } from "../outcome.js";
import type { ProviderScheme } from "../scheme.js";
import { headerId } from "../delivery-id.js";

const SIGNATURE_HEADER = "X-Hub-Signature";
const EVENT_HEADER = "X-Event-Key";
const HOOK_HEADER = "X-Hook-UUID";

/**
 * Bitbucket Cloud, for webhooks with a Secret: `X-Hub-Signature: sha256=<hex HMAC-SHA256(secret,
 * body)>` (support.atlassian.com/bitbucket-cloud/docs/manage-webhooks, "Secure webhooks").
 * Bitbucket Data Center writes the same header the same way.
 *
 * Detected by Bitbucket's own headers, never by X-Hub-Signature, which GitHub (SHA-1) and
 * Intercom also send.
 */
export const bitbucket: ProviderScheme = {
  name: "bitbucket",
  signs: "hex HMAC-SHA256 of the raw body (X-Hub-Signature: sha256=...)",
  label: "Bitbucket",
  signatureHeaders: [SIGNATURE_HEADER],
  toleranceS: undefined,
  // The same on every retry of a delivery (X-Attempt-Number counts them).
  deliveryId: headerId("X-Request-UUID"),
  secretFormat: { description: "The webhook's Secret, as typed or generated in Repository settings, Webhooks; Bitbucket does not show it again once saved." },

  detect: (headers) => hasHeader(headers, EVENT_HEADER, HOOK_HEADER),

  verify(input) {
    const value = header(input.headers, SIGNATURE_HEADER);
    if (value === undefined) return missingSignature();
    const digest = prefixedHexDigest(value, "sha256=");
    if (digest === undefined) return malformedSignature();
    return matched(bytesEqual(digest, hmac("sha256", input.secret, input.body)));
  },

  /** Bitbucket's event key, e.g. `repo:push`, `pullrequest:created`. */
  eventType: (headers) => nonEmptyString(header(headers, EVENT_HEADER)),

  sign: ({ secret, body }) => [[SIGNATURE_HEADER, `sha256=${hmac("sha256", secret, body).toString("hex")}`]],

  signedHeaderNames: () => [SIGNATURE_HEADER.toLowerCase()],
};
