import { anyEqual, hmac } from "../crypto.js";
import { firstString } from "../event-fields.js";
import { hasHeader, header } from "../headers.js";
import { jsonFields } from "../json-fields.js";
import { malformedSignature, missingSignature, timedOutcome, unixSeconds } from "../outcome.js";
import type { ProviderScheme } from "../scheme.js";
import { parseTimedSignature } from "../timed-header.js";
import { bodyId } from "../delivery-id.js";

const SIGNATURE_HEADER = "Paddle-Signature";
/**
 * Paddle documents a five-second tolerance: its SDKs reject older signatures by default and it
 * asks manual implementations to do the same (developer.paddle.com/webhooks/about/signature-verification).
 * Endpoints that capture retries or slow deliveries can widen it with their own tolerance.
 */
const TOLERANCE_S = 5;

const parseSignature = (value: string) => parseTimedSignature(value, { separator: ";", timeKey: "ts", digestKey: "h1" });

/**
 * Paddle Billing: `Paddle-Signature: ts=<unix s>;h1=<hex HMAC-SHA256(secret key, "<ts>:<body>")>`.
 * Paddle documents that a header holds at least one h1 (several while a secret key is rotated);
 * any one of them verifies. Paddle Classic's `p_signature` (RSA over PHP-serialized form
 * fields) is another scheme and is not this one.
 */
export const paddle: ProviderScheme = {
  name: "paddle",
  signs: 'hex HMAC-SHA256 of "<ts>:<body>" (Paddle-Signature: ts=...;h1=...)',
  label: "Paddle",
  signatureHeaders: [SIGNATURE_HEADER],
  toleranceS: TOLERANCE_S,
  deliveryId: bodyId("event_id"),
  secretFormat: {
    description:
      "The notification destination's secret key (Developer Tools, Notifications, Edit destination; endpoint_secret_key in the API), starting pdl_ntfset_; not an API key (pdl_live_apikey_, pdl_sdbx_apikey_).",
    example: "pdl_ntfset_01gkpjp8bkm3tm53kdgkx6sms7_6h3qd3uFSi9YCD3OLYAShQI90XTI5vEI",
  },

  detect: (headers) => hasHeader(headers, SIGNATURE_HEADER),

  verify(input) {
    const value = header(input.headers, SIGNATURE_HEADER);
    if (value === undefined) return missingSignature();
    const signature = parseSignature(value);
    if (signature === undefined) return malformedSignature();
    const expected = hmac("sha256", input.secret, `${signature.timestamp}:`, input.body);
    return timedOutcome(anyEqual(signature.candidates, expected), signature.t, input, TOLERANCE_S);
  },

  /** Paddle names events in the body's `event_type` (`transaction.completed`). */
  eventType: (_headers, body) => firstString(jsonFields(body, { event_type: true }), "event_type"),

  sign({ secret, body, nowMs }) {
    const ts = unixSeconds(nowMs);
    return [[SIGNATURE_HEADER, `ts=${ts};h1=${hmac("sha256", secret, `${ts}:`, body).toString("hex")}`]];
  },

  signedHeaderNames: () => [SIGNATURE_HEADER.toLowerCase()],
};
