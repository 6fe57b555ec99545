import { bytesEqual, hmac, prefixedHexDigest } from "../crypto.js";
import { firstString } from "../event-fields.js";
import { hasHeader, header } from "../headers.js";
import { jsonFields } from "../json-fields.js";
import { DEFAULT_TOLERANCE_S, malformedSignature, missingSignature, parseUnixSeconds, timedOutcome, unixSeconds } from "../outcome.js";
import type { ProviderScheme } from "../scheme.js";

const SIGNATURE_HEADER = "x-zm-signature";
const TIMESTAMP_HEADER = "x-zm-request-timestamp";
/**
 * Zoom signs the timestamp but its documentation names no window; 5 minutes is the one Slack
 * documents for the same v0 construction, and the one webhooks.fyi's Zoom sample applies.
 */
const TOLERANCE_S = DEFAULT_TOLERANCE_S;

/**
 * `x-zm-signature: v0=<hex HMAC-SHA256(secret token, "v0:<x-zm-request-timestamp>:<body>")>`,
 * the timestamp in Unix seconds (https://developers.zoom.us/docs/api/webhooks/#verify-webhook-events).
 * A signature without a usable timestamp cannot be checked, so it counts as malformed.
 */
export const zoom: ProviderScheme = {
  name: "zoom",
  signs: 'hex HMAC-SHA256 of "v0:<timestamp>:<body>" (x-zm-signature: v0=...)',
  label: "Zoom",
  signatureHeaders: [SIGNATURE_HEADER, TIMESTAMP_HEADER],
  toleranceS: TOLERANCE_S,
  // Zoom sends no id of the delivery or of the event.
  deliveryId: undefined,
  secretFormat: {
    description:
      "The app's Secret Token (Zoom App Marketplace, the app's Features or Access page, Event Subscriptions); not the deprecated Verification Token.",
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

  /** `meeting.started`, `endpoint.url_validation`: the body's top-level `event`. */
  eventType: (_headers, body) => firstString(jsonFields(body, { event: true }), "event"),

  sign({ secret, body, nowMs }) {
    const t = unixSeconds(nowMs);
    return [
      [TIMESTAMP_HEADER, String(t)],
      [SIGNATURE_HEADER, `v0=${hmac("sha256", secret, `v0:${t}:`, body).toString("hex")}`],
    ];
  },

  signedHeaderNames: () => [SIGNATURE_HEADER, TIMESTAMP_HEADER],
};
