import { anyEqual, hmac } from "../crypto.js";
import { firstString } from "../event-fields.js";
import { hasHeader, header } from "../headers.js";
import { jsonFields } from "../json-fields.js";
import { malformedSignature, missingSignature, timedOutcome, unixSeconds } from "../outcome.js";
import type { ProviderScheme } from "../scheme.js";
import { parseTimedSignature } from "../timed-header.js";

const SIGNATURE_HEADER = "Calendly-Webhook-Signature";
/** Calendly's documentation suggests rejecting signatures older than three minutes. */
const TOLERANCE_S = 180;

const parseSignature = (value: string) => parseTimedSignature(value, { separator: ",", timeKey: "t", digestKey: "v1" });

/**
 * `Calendly-Webhook-Signature: t=<unix s>,v1=<hex HMAC-SHA256(signing key, "<t>.<body>")>`
 * (developer.calendly.com, "Webhook signatures"). The format is Stripe's, and so is the
 * parsing: the first `t` counts and any v1 entry may match.
 */
export const calendly: ProviderScheme = {
  name: "calendly",
  signs: 'hex HMAC-SHA256 of "<t>.<body>" (Calendly-Webhook-Signature: t=...,v1=...)',
  label: "Calendly",
  signatureHeaders: [SIGNATURE_HEADER],
  toleranceS: TOLERANCE_S,
  // Calendly sends no id of the delivery or of the event (only the resource URIs in its payload).
  deliveryId: undefined,
  secretFormat: {
    description: "The webhook subscription's signing key: the signing_key sent when the subscription was created (POST /webhook_subscriptions); not a personal access token.",
  },

  detect: (headers) => hasHeader(headers, SIGNATURE_HEADER),

  verify(input) {
    const value = header(input.headers, SIGNATURE_HEADER);
    if (value === undefined) return missingSignature();
    const signature = parseSignature(value);
    if (signature === undefined) return malformedSignature();
    const expected = hmac("sha256", input.secret, `${signature.timestamp}.`, input.body);
    return timedOutcome(anyEqual(signature.candidates, expected), signature.t, input, TOLERANCE_S);
  },

  /** The body's `event`, e.g. `invitee.created`. */
  eventType: (_headers, body) => firstString(jsonFields(body, { event: true }), "event"),

  sign({ secret, body, nowMs }) {
    const t = unixSeconds(nowMs);
    return [[SIGNATURE_HEADER, `t=${t},v1=${hmac("sha256", secret, `${t}.`, body).toString("hex")}`]];
  },

  signedHeaderNames: () => [SIGNATURE_HEADER.toLowerCase()],
};
