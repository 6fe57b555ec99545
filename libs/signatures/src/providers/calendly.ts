import { anyEqual, decodeHex, hmac, SHA256_BYTES } from "../crypto.js";
import { firstString } from "../event-fields.js";
import { hasHeader, header } from "../headers.js";
import { jsonFields } from "../json-fields.js";
import { malformedSignature, missingSignature, parseUnixSeconds, timedOutcome, unixSeconds } from "../outcome.js";
import type { ProviderScheme } from "../scheme.js";

const SIGNATURE_HEADER = "Calendly-Webhook-Signature";
/** Calendly's documentation suggests rejecting signatures older than three minutes. */
const TOLERANCE_S = 180;

/** The first `t` and every v1 entry that is a SHA-256 hex digest; undefined unless both are there. */
function parseSignature(value: string): { timestamp: string; t: number; candidates: Buffer[] } | undefined {
  let timestamp: string | undefined;
  const candidates: Buffer[] = [];
  for (const item of value.split(",")) {
    const eq = item.indexOf("=");
    if (eq < 0) continue;
    const key = item.slice(0, eq).trim();
    const val = item.slice(eq + 1).trim();
    if (key === "t") timestamp ??= val;
    else if (key === "v1") {
      const digest = decodeHex(val);
      if (digest?.length === SHA256_BYTES) candidates.push(digest);
    }
  }
  const t = parseUnixSeconds(timestamp);
  return timestamp === undefined || t === undefined || candidates.length === 0 ? undefined : { timestamp, t, candidates };
}

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
