import { bytesEqual, decodeBase64, hmac, SHA256_BYTES } from "../crypto.js";
import { firstString } from "../event-fields.js";
import { hasHeader, header } from "../headers.js";
import { jsonFields } from "../json-fields.js";
import { DEFAULT_TOLERANCE_S, malformedSignature, missingSignature, timedOutcome } from "../outcome.js";
import type { ProviderScheme } from "../scheme.js";

const SIGNATURE_HEADER = "X-HubSpot-Signature-v3";
const TIMESTAMP_HEADER = "X-HubSpot-Request-Timestamp";
/** The v1/v2 signature, sent alongside v3 for older consumers: not checked, but HubSpot's own name. */
const LEGACY_SIGNATURE_HEADER = "X-HubSpot-Signature";
/** HubSpot's documentation and libraries reject a timestamp older than 5 minutes. */
const TOLERANCE_S = DEFAULT_TOLERANCE_S;
/** Webhooks are always POSTed; the scheme input carries no method. */
const METHOD = "POST";

/** The escapes HubSpot's documentation has decoded in the URI before it is signed, and only these. */
const DECODED_ESCAPES: Readonly<Record<string, string>> = {
  "%3A": ":", "%2F": "/", "%3F": "?", "%40": "@", "%21": "!", "%24": "$",
  "%27": "'", "%28": "(", "%29": ")", "%2A": "*", "%2C": ",", "%3B": ";",
};

function signedUri(url: string | undefined): string {
  return (url ?? "").replace(/%[0-9A-Fa-f]{2}/g, (escape) => DECODED_ESCAPES[escape.toUpperCase()] ?? escape);
}

const SUBSCRIPTION_TYPE = { subscriptionType: true } as const;
const isSpace = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** From the first element of a top-level JSON array on, or the body as it is when it is no array. */
function firstArrayElement(body: Uint8Array): Uint8Array {
  let i = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  while (isSpace(body[i])) i += 1;
  if (body[i] !== 0x5b) return body;
  i += 1;
  while (isSpace(body[i])) i += 1;
  return body.subarray(i);
}

/** Milliseconds, as HubSpot writes them: plain digits. */
function parseMillis(text: string | undefined): number | undefined {
  return text !== undefined && /^[0-9]{1,16}$/.test(text) ? Number(text) : undefined;
}

function signature(secret: Uint8Array, url: string | undefined, body: Uint8Array, timestamp: string): Buffer {
  return hmac("sha256", secret, `${METHOD}${signedUri(url)}`, body, timestamp);
}

/**
 * v3: `X-HubSpot-Signature-v3: <base64 HMAC-SHA256(client secret, method + URI + body + ts)>`
 * with `X-HubSpot-Request-Timestamp: <ts, Unix ms>` (developers.hubspot.com, "Validating
 * requests", v3). The URI is the full URL HubSpot called, scheme and query included, with the
 * escapes above decoded. It comes from SchemeVerifyInput.url; when that is unknown the URI
 * signed is empty, which no real HubSpot signature matches. The timestamp is judged in whole
 * seconds, either side of now.
 *
 * The older v1/v2 signatures (X-HubSpot-Signature) are not checked, as they sign no
 * timestamp, and re-signing leaves them as they were: v1 covers only the secret and the body,
 * so it still holds; v2 also covers the URI, so it holds only for a replay to the same URL.
 */
export const hubspot: ProviderScheme = {
  name: "hubspot",
  signs: "base64 HMAC-SHA256 of method + URI + body + timestamp (X-HubSpot-Signature-v3, X-HubSpot-Request-Timestamp in ms)",
  label: "HubSpot",
  signatureHeaders: [SIGNATURE_HEADER, TIMESTAMP_HEADER],
  toleranceS: TOLERANCE_S,
  // HubSpot batches events in one array: an id of the batch would drop whatever else a retry brings.
  deliveryId: undefined,
  secretFormat: {
    description: "The app's client secret (the app's Auth settings in the HubSpot developer account); not an access token or the client ID. The endpoint's public URL must be the one HubSpot calls.",
    example: "yyyyyyyy-yyyy-yyyy-yyyy-yyyyyyyyyyyy",
  },

  detect: (headers) => hasHeader(headers, SIGNATURE_HEADER, TIMESTAMP_HEADER, LEGACY_SIGNATURE_HEADER),

  verify(input) {
    const value = header(input.headers, SIGNATURE_HEADER);
    if (value === undefined) return missingSignature();
    const timestamp = header(input.headers, TIMESTAMP_HEADER);
    const ms = parseMillis(timestamp);
    const digest = decodeBase64(value);
    if (timestamp === undefined || ms === undefined || digest?.length !== SHA256_BYTES) return malformedSignature();
    const expected = signature(input.secret, input.url, input.body, timestamp);
    return timedOutcome(bytesEqual(digest, expected), Math.floor(ms / 1000), input, TOLERANCE_S);
  },

  /** HubSpot posts an array of events; the first one's `subscriptionType`, e.g. `contact.creation`. */
  eventType: (_headers, body) => firstString(jsonFields(firstArrayElement(body), SUBSCRIPTION_TYPE), "subscriptionType"),

  sign({ secret, body, nowMs, url }) {
    const timestamp = String(Math.floor(nowMs));
    return [
      [TIMESTAMP_HEADER, timestamp],
      [SIGNATURE_HEADER, signature(secret, url, body, timestamp).toString("base64")],
    ];
  },

  signedHeaderNames: () => [SIGNATURE_HEADER.toLowerCase(), TIMESTAMP_HEADER.toLowerCase()],
};
