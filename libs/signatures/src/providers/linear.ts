import { bytesEqual, decodeHex, hmac, SHA256_BYTES } from "../crypto.js";
import { firstString, nonEmptyString } from "../event-fields.js";
import { hasHeader, header } from "../headers.js";
import { jsonFields } from "../json-fields.js";
import { topLevelNumber } from "../json-number.js";
import { malformedSignature, matched, missingSignature, timedOutcome } from "../outcome.js";
import type { ProviderScheme } from "../scheme.js";
import { headerId } from "../delivery-id.js";

const SIGNATURE_HEADER = "Linear-Signature";
const EVENT_HEADER = "Linear-Event";
const DELIVERY_HEADER = "Linear-Delivery";
/** The body field holding the delivery time, in Unix milliseconds (`LINEAR_WEBHOOK_TS_FIELD` in Linear's SDK). */
const TIMESTAMP_FIELD = "webhookTimestamp";
/** Linear's documentation and SDK reject a webhookTimestamp more than a minute from now. */
const TOLERANCE_S = 60;

/**
 * `Linear-Signature: <hex HMAC-SHA256(secret, body)>`, no prefix (linear.app/developers/webhooks,
 * "Securing webhooks"; LinearWebhookClient.verify in @linear/sdk). The timestamp is not in a
 * header but in the signed body, as `webhookTimestamp` in milliseconds; it is judged here in
 * whole seconds, so the one-minute edge is accurate to a second. A body without a numeric
 * webhookTimestamp is judged on its signature alone, as Linear's SDK does.
 *
 * Re-signing cannot refresh that timestamp: it lies inside the body, which a replay keeps byte
 * for byte, so a receiver that checks it (Linear's SDK does) still rejects a replay of a
 * delivery more than a minute old.
 */
export const linear: ProviderScheme = {
  name: "linear",
  signs: "hex HMAC-SHA256 of the raw body (Linear-Signature), the body carrying webhookTimestamp in ms",
  label: "Linear",
  signatureHeaders: [SIGNATURE_HEADER],
  toleranceS: TOLERANCE_S,
  deliveryId: headerId("Linear-Delivery"),
  secretFormat: {
    description: "The webhook's signing secret, shown on the webhook's page (Settings, API, Webhooks) in Linear; not an API key (lin_api_).",
  },

  detect: (headers) => hasHeader(headers, SIGNATURE_HEADER, EVENT_HEADER, DELIVERY_HEADER),

  verify(input) {
    const value = header(input.headers, SIGNATURE_HEADER);
    if (value === undefined) return missingSignature();
    const digest = decodeHex(value);
    if (digest?.length !== SHA256_BYTES) return malformedSignature();
    const signatureMatches = bytesEqual(digest, hmac("sha256", input.secret, input.body));
    const timestampMs = topLevelNumber(input.body, TIMESTAMP_FIELD);
    if (timestampMs === undefined || !Number.isFinite(timestampMs)) return matched(signatureMatches);
    return timedOutcome(signatureMatches, Math.floor(timestampMs / 1000), input, TOLERANCE_S);
  },

  /** `Issue.create`: the entity type (Linear-Event, else the body's `type`) and the body's `action`. */
  eventType(headers, body) {
    const fields = jsonFields(body, { type: true, action: true });
    const type = nonEmptyString(header(headers, EVENT_HEADER)) ?? firstString(fields, "type");
    if (type === undefined) return undefined;
    const action = firstString(fields, "action");
    return action === undefined ? type : `${type}.${action}`;
  },

  sign: ({ secret, body }) => [[SIGNATURE_HEADER, hmac("sha256", secret, body).toString("hex")]],

  signedHeaderNames: () => [SIGNATURE_HEADER.toLowerCase()],
};
