import { createHash, timingSafeEqual } from "node:crypto";
import { nonEmptyString } from "../event-fields.js";
import { hasHeader, header } from "../headers.js";
import { malformedSignature, matched, missingSignature } from "../outcome.js";
import type { ProviderScheme } from "../scheme.js";
import { headerId } from "../delivery-id.js";

const TOKEN_HEADER = "X-Gitlab-Token";
const EVENT_HEADER = "X-Gitlab-Event";

/**
 * Equal in constant time whatever the lengths: both sides are hashed to 32 bytes first, so
 * neither an early exit on a length mismatch nor the comparison reveals how long the secret is.
 */
function tokenEquals(token: string, secret: Uint8Array): boolean {
  const digest = (bytes: string | Uint8Array) => createHash("sha256").update(bytes).digest();
  return timingSafeEqual(digest(token), digest(secret));
}

/**
 * GitLab does not sign: `X-Gitlab-Token` carries the webhook's Secret token itself
 * (docs.gitlab.com, user/project/integrations/webhooks, "Validate payloads by using a secret
 * token"). Verifying means comparing it with the endpoint secret; nothing binds it to the body,
 * so a captured request replays as it is, and a re-signed one simply carries the token.
 */
export const gitlab: ProviderScheme = {
  name: "gitlab",
  signs: "nothing: X-Gitlab-Token carries the secret token itself (no HMAC), compared as it is",
  label: "GitLab",
  signatureHeaders: [TOKEN_HEADER],
  toleranceS: undefined,
  // Idempotency-Key is the same on every retry (GitLab 17.4+); before it, the event's UUID.
  deliveryId: headerId("Idempotency-Key", "X-Gitlab-Event-UUID"),
  secretFormat: { description: "The webhook's Secret token, as typed in the project's or group's Settings, Webhooks (or the system hook's settings)." },

  detect: (headers) => hasHeader(headers, EVENT_HEADER, TOKEN_HEADER),

  verify(input) {
    const token = header(input.headers, TOKEN_HEADER);
    if (token === undefined) return missingSignature();
    if (token === "") return malformedSignature();
    return matched(tokenEquals(token, input.secret));
  },

  /** GitLab's own name for the hook, e.g. `Push Hook`, `Merge Request Hook`. */
  eventType: (headers) => nonEmptyString(header(headers, EVENT_HEADER)),

  sign: ({ secret }) => [[TOKEN_HEADER, Buffer.from(secret).toString("utf8")]],

  signedHeaderNames: () => [TOKEN_HEADER.toLowerCase()],
};
