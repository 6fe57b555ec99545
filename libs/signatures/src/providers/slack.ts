import { bytesEqual, hmac, prefixedHexDigest } from "../crypto.js";
import { firstString, formPayload, isForm } from "../event-fields.js";
import { hasHeader, header } from "../headers.js";
import { jsonFields, objectField, stringField, type FieldSpec } from "../json-fields.js";
import { DEFAULT_TOLERANCE_S, malformedSignature, missingSignature, parseUnixSeconds, timedOutcome, unixSeconds } from "../outcome.js";
import type { ProviderScheme } from "../scheme.js";
import { bodyId } from "../delivery-id.js";

const SIGNATURE_HEADER = "X-Slack-Signature";
const TIMESTAMP_HEADER = "X-Slack-Request-Timestamp";
/** Slack's documentation rejects requests more than 5 minutes away, against replay. */
const TOLERANCE_S = DEFAULT_TOLERANCE_S;

const EVENT: FieldSpec = { type: true, event: { type: true } };
const CHALLENGE: FieldSpec = { type: true, challenge: true };

/**
 * `X-Slack-Signature: v0=<hex HMAC-SHA256(secret, "v0:<X-Slack-Request-Timestamp>:<body>")>`.
 * A signature without a usable timestamp header cannot be checked, so it counts as malformed.
 */
export const slack: ProviderScheme = {
  name: "slack",
  signs: 'hex HMAC-SHA256 of "v0:<timestamp>:<body>" (X-Slack-Signature: v0=...)',
  label: "Slack",
  signatureHeaders: [SIGNATURE_HEADER, TIMESTAMP_HEADER],
  toleranceS: TOLERANCE_S,
  // Events API retries keep event_id (X-Slack-Retry-Num counts them).
  deliveryId: bodyId("event_id"),
  secretFormat: {
    description: "The app's Signing Secret (Basic Information, App Credentials); not the deprecated Verification Token or an xoxb- token.",
    example: "8f742231b10e8888abcd99yyyzzz85a5",
  },

  detect: (headers) => hasHeader(headers, SIGNATURE_HEADER, TIMESTAMP_HEADER),

  verify(input) {
    const value = header(input.headers, SIGNATURE_HEADER);
    if (value === undefined) return missingSignature();
    const timestamp = header(input.headers, TIMESTAMP_HEADER);
    const t = parseUnixSeconds(timestamp);
    const digest = prefixedHexDigest(value, "v0=");
    if (t === undefined || digest === undefined) return malformedSignature();
    const expected = hmac("sha256", input.secret, `v0:${timestamp}:`, input.body);
    return timedOutcome(bytesEqual(digest, expected), t, input, TOLERANCE_S);
  },

  /**
   * Slack posts JSON for the Events API, but a form with the JSON in its `payload` field for
   * interactivity. The form is recognised by its content, not only its Content-Type, so captures
   * whose Content-Type was lost are still named.
   */
  eventType(headers, body) {
    const json = jsonFields(body, EVENT);
    if (json !== undefined) return firstString(objectField(json, "event"), "type") ?? firstString(json, "type");
    const contentType = header(headers, "content-type");
    if (contentType !== undefined && !isForm(contentType)) return undefined;
    return firstString(formPayload(body, { type: true }), "type");
  },

  sign({ secret, body, nowMs }) {
    const t = unixSeconds(nowMs);
    return [
      [TIMESTAMP_HEADER, String(t)],
      [SIGNATURE_HEADER, `v0=${hmac("sha256", secret, `v0:${t}:`, body).toString("hex")}`],
    ];
  },

  signedHeaderNames: () => [SIGNATURE_HEADER.toLowerCase(), TIMESTAMP_HEADER.toLowerCase()],
};

/** Slack's url_verification handshake: the challenge string to answer with, else undefined. */
export function slackUrlVerificationChallenge(body: Uint8Array): string | undefined {
  const json = jsonFields(body, CHALLENGE);
  return json?.["type"] === "url_verification" ? stringField(json, "challenge") : undefined;
}
