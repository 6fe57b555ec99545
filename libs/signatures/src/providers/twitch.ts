import { randomUUID } from "node:crypto";
import { bytesEqual, hmac, prefixedHexDigest } from "../crypto.js";
import { firstString, nonEmptyString } from "../event-fields.js";
import { hasHeader, header } from "../headers.js";
import { jsonFields, objectField } from "../json-fields.js";
import { malformedSignature, missingSignature, timedOutcome } from "../outcome.js";
import type { ProviderScheme } from "../scheme.js";
import { headerId } from "../delivery-id.js";

const SIGNATURE_HEADER = "Twitch-Eventsub-Message-Signature";
const ID_HEADER = "Twitch-Eventsub-Message-Id";
const TIMESTAMP_HEADER = "Twitch-Eventsub-Message-Timestamp";
const TYPE_HEADER = "Twitch-Eventsub-Message-Type";
const SUBSCRIPTION_TYPE_HEADER = "Twitch-Eventsub-Subscription-Type";
/** Twitch tells receivers to drop messages older than 10 minutes, against replay. */
const TOLERANCE_S = 600;

/** RFC 3339 as Twitch writes it: UTC or an offset, with up to nanoseconds. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

/** Unix seconds of an RFC 3339 timestamp, or undefined; the text signed is the header's own. */
function parseRfc3339Seconds(text: string | undefined): number | undefined {
  if (text === undefined || !RFC3339.test(text)) return undefined;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : undefined;
}

/**
 * `Twitch-Eventsub-Message-Signature: sha256=<hex HMAC-SHA256(secret, id + timestamp + body)>`,
 * the id and the RFC 3339 timestamp read from their own headers and concatenated without
 * separators (https://dev.twitch.tv/docs/eventsub/handling-webhook-events/#verifying-the-event-message).
 * The secret is the one the subscription was created with.
 */
export const twitch: ProviderScheme = {
  name: "twitch",
  signs: "hex HMAC-SHA256 of message id + timestamp + body (Twitch-Eventsub-Message-Signature: sha256=...)",
  label: "Twitch EventSub",
  signatureHeaders: [SIGNATURE_HEADER, ID_HEADER, TIMESTAMP_HEADER],
  toleranceS: TOLERANCE_S,
  // Twitch asks receivers to deduplicate on it.
  deliveryId: headerId("Twitch-Eventsub-Message-Id"),
  secretFormat: {
    description: "The transport secret the EventSub subscription was created with (10 to 100 ASCII characters), as sent to Twitch.",
  },

  detect: (headers) => hasHeader(headers, SIGNATURE_HEADER, ID_HEADER, TYPE_HEADER),

  verify(input) {
    const value = header(input.headers, SIGNATURE_HEADER);
    if (value === undefined) return missingSignature();
    const id = header(input.headers, ID_HEADER);
    const timestamp = header(input.headers, TIMESTAMP_HEADER);
    const t = parseRfc3339Seconds(timestamp);
    const digest = prefixedHexDigest(value, "sha256=");
    if (!id || timestamp === undefined || t === undefined || digest === undefined) return malformedSignature();
    const expected = hmac("sha256", input.secret, id, timestamp, input.body);
    return timedOutcome(bytesEqual(digest, expected), t, input, TOLERANCE_S);
  },

  /** `channel.follow`: the subscription type header, else the body's subscription.type. */
  eventType: (headers, body) =>
    nonEmptyString(header(headers, SUBSCRIPTION_TYPE_HEADER)) ??
    firstString(objectField(jsonFields(body, { subscription: { type: true } }), "subscription"), "type"),

  /** Keeps the original's message id (receivers deduplicate on it); a request without one gets a new UUID. */
  sign({ secret, body, nowMs, headers }) {
    const id = header(headers, ID_HEADER) || randomUUID();
    const timestamp = new Date(nowMs).toISOString();
    return [
      [ID_HEADER, id],
      [TIMESTAMP_HEADER, timestamp],
      [SIGNATURE_HEADER, `sha256=${hmac("sha256", secret, id, timestamp, body).toString("hex")}`],
    ];
  },

  signedHeaderNames: () => [SIGNATURE_HEADER.toLowerCase(), ID_HEADER.toLowerCase(), TIMESTAMP_HEADER.toLowerCase()],
};
