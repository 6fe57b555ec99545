import { randomBytes } from "node:crypto";
import { anyEqual, decodeBase64, hmac, SHA256_BYTES } from "./crypto.js";
import { hasHeader, header, type HeaderPair } from "./headers.js";
import { failed, parseUnixSeconds, timedOutcome, unixSeconds } from "./outcome.js";
import type { VerifyInput, VerifyOutcome } from "./types.js";

/** Svix, which wrote the Standard Webhooks spec, still sends its own `svix-` spelling. */
type Family = "webhook" | "svix";

const FAMILIES: readonly Family[] = ["webhook", "svix"];
const SECRET_PREFIX = "whsec_";

export const STANDARD_WEBHOOKS_HEADER_NAMES = FAMILIES.flatMap((f) => [`${f}-id`, `${f}-timestamp`, `${f}-signature`]);

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

/**
 * `webhook-signature` is a space-separated list of `<version>,<signature>`; every `v1` entry is a
 * base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`, and any one of them verifies.
 * Other versions (such as `v1a`, an asymmetric signature) are skipped. The `webhook-` headers are
 * read when `webhook-signature` is present, else the `svix-` ones; the id and timestamp come from
 * the same family as the signature.
 */
export function verifyStandardWebhooks(input: VerifyInput): VerifyOutcome {
  const family = FAMILIES.find((f) => hasHeader(input.headers, `${f}-signature`));
  if (family === undefined) return failed("missing_signature");
  const signatures = header(input.headers, `${family}-signature`) ?? "";
  const id = header(input.headers, `${family}-id`);
  const timestamp = header(input.headers, `${family}-timestamp`);
  const t = parseUnixSeconds(timestamp);
  const candidates: Buffer[] = [];
  for (const entry of signatures.split(/\s+/)) {
    const comma = entry.indexOf(",");
    if (comma < 0 || entry.slice(0, comma) !== "v1") continue;
    const digest = decodeBase64(entry.slice(comma + 1));
    if (digest?.length === SHA256_BYTES) candidates.push(digest);
  }
  if (!id || t === undefined || candidates.length === 0) return failed("malformed_signature");
  const expected = hmac("sha256", standardWebhooksKey(input.secret), `${id}.${timestamp}.`, input.body);
  return timedOutcome(anyEqual(candidates, expected), t, input);
}

/**
 * Keeps the original's message id (receivers use it to deduplicate, and it is part of what is
 * signed) and its header family; a request that had neither gets a new id and `webhook-` headers.
 */
export function signStandardWebhooks(secret: Uint8Array, body: Uint8Array, nowMs: number, original: readonly HeaderPair[]): HeaderPair[] {
  const family =
    FAMILIES.find((f) => hasHeader(original, `${f}-id`, `${f}-timestamp`, `${f}-signature`)) ?? "webhook";
  const id = header(original, `${family}-id`) || `msg_${randomBytes(16).toString("hex")}`;
  const t = unixSeconds(nowMs);
  const signature = hmac("sha256", standardWebhooksKey(secret), `${id}.${t}.`, body).toString("base64");
  return [
    [`${family}-id`, id],
    [`${family}-timestamp`, String(t)],
    [`${family}-signature`, `v1,${signature}`],
  ];
}
