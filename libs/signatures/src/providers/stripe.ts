import { anyEqual, hmac } from "../crypto.js";
import { firstString } from "../event-fields.js";
import { hasHeader, header } from "../headers.js";
import { jsonFields } from "../json-fields.js";
import { DEFAULT_TOLERANCE_S, malformedSignature, missingSignature, timedOutcome, unixSeconds } from "../outcome.js";
import type { ProviderScheme } from "../scheme.js";
import { parseTimedSignature } from "../timed-header.js";
import { bodyId } from "../delivery-id.js";

const SIGNATURE_HEADER = "Stripe-Signature";
/** Stripe's libraries reject events signed more than 5 minutes away by default. */
const TOLERANCE_S = DEFAULT_TOLERANCE_S;

const parseSignature = (value: string) => parseTimedSignature(value, { separator: ",", timeKey: "t", digestKey: "v1" });

/**
 * `Stripe-Signature: t=<unix s>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>[,v1=...][,v0=...]`.
 * Several v1 entries appear while a secret is being rolled, and any one of them verifies; v0 is
 * Stripe's legacy test-mode scheme and is ignored, as are v1 entries that are not a SHA-256 hex
 * digest. If `t` repeats, the first one counts.
 */
export const stripe: ProviderScheme = {
  name: "stripe",
  signs: 'hex HMAC-SHA256 of "<t>.<body>" (Stripe-Signature: t=...,v1=...)',
  label: "Stripe",
  signatureHeaders: [SIGNATURE_HEADER],
  toleranceS: TOLERANCE_S,
  // The event's id (evt_...), kept by every retry.
  deliveryId: bodyId("id"),
  secretFormat: {
    description: "The endpoint's signing secret, shown on its page in the Stripe Dashboard and starting whsec_; not an API key (sk_, rk_).",
    example: "whsec_…",
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

  eventType: (_headers, body) => firstString(jsonFields(body, { type: true }), "type"),

  sign({ secret, body, nowMs }) {
    const t = unixSeconds(nowMs);
    return [[SIGNATURE_HEADER, `t=${t},v1=${hmac("sha256", secret, `${t}.`, body).toString("hex")}`]];
  },

  signedHeaderNames: () => [SIGNATURE_HEADER.toLowerCase()],
};
