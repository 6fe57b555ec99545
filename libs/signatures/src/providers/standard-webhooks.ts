import { randomBytes } from "node:crypto";
import { anyEqual, decodeBase64, hmac, SHA256_BYTES } from "../crypto.js";
import { firstString } from "../event-fields.js";
import { hasHeader, header, type HeaderPair } from "../headers.js";
import { jsonFields } from "../json-fields.js";
import { DEFAULT_TOLERANCE_S, malformedSignature, missingSignature, parseUnixSeconds, timedOutcome, unixSeconds } from "../outcome.js";
import type { ProviderScheme } from "../scheme.js";
import { headerId } from "../delivery-id.js";

/** Svix, which wrote the Standard Webhooks spec, still sends its own `svix-` spelling. */
type Family = "webhook" | "svix";

const FAMILIES: readonly Family[] = ["webhook", "svix"];
const SECRET_PREFIX = "whsec_";
/** The spec's reference libraries reject messages more than 5 minutes away. */
const TOLERANCE_S = DEFAULT_TOLERANCE_S;

const HEADER_NAMES = FAMILIES.flatMap((f) => [`${f}-id`, `${f}-timestamp`, `${f}-signature`]);

/**
 * The HMAC key for a secret as the user typed it. A `whsec_<base64>` secret (the format Standard
 * Webhooks and Svix hand out) signs with the base64-decoded bytes after the prefix; whitespace
 * around it is ignored, since it cannot be part of base64 and usually comes from pasting. Any
 * other secret, including `whsec_` followed by something that is not base64, signs with its raw
 * UTF-8 bytes: unlike the reference library we do not assume an unprefixed secret is base64.
 */
export function standardWebhooksKey(secret: Uint8Array): Uint8Array {
  const text = Buffer.from(secret).toString("utf8").trim();
  if (text.startsWith(SECRET_PREFIX)) {
    const key = decodeBase64(text.slice(SECRET_PREFIX.length));
    if (key !== undefined) return key;
  }
  return secret;
}

/** Every `v1` entry of a space-separated `<version>,<base64>` list that is a SHA-256 digest. */
function v1Signatures(list: string): Buffer[] {
  const candidates: Buffer[] = [];
  for (const entry of list.split(/\s+/)) {
    const comma = entry.indexOf(",");
    if (comma < 0 || entry.slice(0, comma) !== "v1") continue;
    const digest = decodeBase64(entry.slice(comma + 1));
    if (digest?.length === SHA256_BYTES) candidates.push(digest);
  }
  return candidates;
}

/**
 * `webhook-signature` is a space-separated list of `<version>,<signature>`; every `v1` entry is a
 * base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`, and any one of them verifies.
 * Other versions (such as `v1a`, an asymmetric signature) are skipped. The `webhook-` headers are
 * read when `webhook-signature` is present, else the `svix-` ones; the id and timestamp come from
 * the same family as the signature.
 */
export const standardWebhooks: ProviderScheme = {
  name: "standard_webhooks",
  signs: 'base64 HMAC-SHA256 of "<msg id>.<timestamp>.<body>" with the base64 key after whsec_ (webhook-signature: v1,...)',
  label: "Standard Webhooks (Svix)",
  signatureHeaders: HEADER_NAMES,
  toleranceS: TOLERANCE_S,
  // The message id, kept by every retry (the spec asks receivers to deduplicate on it).
  deliveryId: headerId("webhook-id", "svix-id"),
  secretFormat: {
    description: "The endpoint's signing secret, whsec_ followed by base64, as the sender shows it; any other text is used as its raw bytes.",
    example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  },

  detect: (headers) => hasHeader(headers, "webhook-signature", "webhook-id", "svix-signature", "svix-id"),

  verify(input) {
    const family = FAMILIES.find((f) => hasHeader(input.headers, `${f}-signature`));
    if (family === undefined) return missingSignature();
    const candidates = v1Signatures(header(input.headers, `${family}-signature`) ?? "");
    const id = header(input.headers, `${family}-id`);
    const timestamp = header(input.headers, `${family}-timestamp`);
    const t = parseUnixSeconds(timestamp);
    if (!id || t === undefined || candidates.length === 0) return malformedSignature();
    const expected = hmac("sha256", standardWebhooksKey(input.secret), `${id}.${timestamp}.`, input.body);
    return timedOutcome(anyEqual(candidates, expected), t, input, TOLERANCE_S);
  },

  eventType: (_headers, body) => firstString(jsonFields(body, { type: true }), "type"),

  /**
   * Keeps the original's message id (receivers use it to deduplicate, and it is part of what is
   * signed) and its header family; a request that had neither gets a new id and `webhook-` headers.
   */
  sign({ secret, body, nowMs, headers }): HeaderPair[] {
    const family = FAMILIES.find((f) => hasHeader(headers, `${f}-id`, `${f}-timestamp`, `${f}-signature`)) ?? "webhook";
    const id = header(headers, `${family}-id`) || `msg_${randomBytes(16).toString("hex")}`;
    const t = unixSeconds(nowMs);
    const signature = hmac("sha256", standardWebhooksKey(secret), `${id}.${t}.`, body).toString("base64");
    return [
      [`${family}-id`, id],
      [`${family}-timestamp`, String(t)],
      [`${family}-signature`, `v1,${signature}`],
    ];
  },

  /** Both families, so a stale signature in the other spelling cannot survive next to the fresh one. */
  signedHeaderNames: () => [...HEADER_NAMES],
};
