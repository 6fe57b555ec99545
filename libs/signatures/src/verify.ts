import { header, has, type HeaderPair } from "./headers.js";
import { fromBase64, fromHex, hmac, sameBytes } from "./hmac.js";
import type { FailureReason, Provider, VerifyInput, VerifyOutcome } from "./types.js";

const VERIFIED: VerifyOutcome = { verification: "verified" };
const fail = (reason: FailureReason): VerifyOutcome => ({ verification: "failed", reason });

const DEFAULT_TOLERANCE_S = 300;
export const DEFAULT_GENERIC_HEADER = "X-Signature";

/**
 * Which provider sent a request, from headers only those providers send. Checked in a fixed
 * order; a request carrying several families is attributed to the first.
 */
export function detectProvider(headers: readonly HeaderPair[]): Provider | undefined {
  if (has(headers, "stripe-signature")) return "stripe";
  if (has(headers, "x-github-event", "x-hub-signature-256", "x-github-hook-id")) return "github";
  if (has(headers, "x-slack-signature", "x-slack-request-timestamp")) return "slack";
  if (has(headers, "x-shopify-hmac-sha256", "x-shopify-topic")) return "shopify";
  if (has(headers, "webhook-signature", "webhook-id", "svix-signature", "svix-id")) return "standard_webhooks";
  return undefined;
}

function unixSeconds(text: string | undefined): number | undefined {
  return text !== undefined && /^\d{1,12}$/.test(text.trim()) ? Number(text.trim()) : undefined;
}

/** The signature decides first; a valid signature with a stale timestamp is a replay. */
function timed(signatureOk: boolean, timestampS: number, input: VerifyInput): VerifyOutcome {
  if (!signatureOk) return fail("signature_mismatch");
  const tolerance = input.toleranceS ?? DEFAULT_TOLERANCE_S;
  return Math.abs(input.nowMs / 1000 - timestampS) > tolerance ? fail("timestamp_out_of_tolerance") : VERIFIED;
}

function stripe(input: VerifyInput): VerifyOutcome {
  const value = header(input.headers, "stripe-signature");
  if (value === undefined) return fail("missing_signature");
  let t: number | undefined;
  const v1: Buffer[] = [];
  for (const item of value.split(",")) {
    const at = item.indexOf("=");
    if (at < 0) continue;
    const key = item.slice(0, at).trim();
    const val = item.slice(at + 1).trim();
    if (key === "t") t = unixSeconds(val);
    else if (key === "v1") {
      const sig = fromHex(val);
      if (sig) v1.push(sig);
    }
  }
  if (t === undefined || v1.length === 0) return fail("malformed_signature");
  const expected = hmac("sha256", input.secret, `${t}.`, input.body);
  return timed(v1.some((sig) => sameBytes(sig, expected)), t, input);
}

function github(input: VerifyInput): VerifyOutcome {
  const value = header(input.headers, "x-hub-signature-256");
  if (value === undefined) return fail("missing_signature");
  const trimmed = value.trim();
  const sig = trimmed.toLowerCase().startsWith("sha256=") ? fromHex(trimmed.slice(7)) : undefined;
  if (!sig) return fail("malformed_signature");
  return sameBytes(sig, hmac("sha256", input.secret, input.body)) ? VERIFIED : fail("signature_mismatch");
}

function slack(input: VerifyInput): VerifyOutcome {
  const value = header(input.headers, "x-slack-signature");
  if (value === undefined) return fail("missing_signature");
  const timestamp = header(input.headers, "x-slack-request-timestamp");
  const t = unixSeconds(timestamp);
  const trimmed = value.trim();
  const sig = trimmed.startsWith("v0=") ? fromHex(trimmed.slice(3)) : undefined;
  if (t === undefined || !sig) return fail("malformed_signature");
  const expected = hmac("sha256", input.secret, `v0:${timestamp!.trim()}:`, input.body);
  return timed(sameBytes(sig, expected), t, input);
}

function shopify(input: VerifyInput): VerifyOutcome {
  const value = header(input.headers, "x-shopify-hmac-sha256");
  if (value === undefined) return fail("missing_signature");
  const sig = fromBase64(value.trim());
  if (!sig || sig.length !== 32) return fail("malformed_signature");
  return sameBytes(sig, hmac("sha256", input.secret, input.body)) ? VERIFIED : fail("signature_mismatch");
}

/** `whsec_<base64>` is the Standard Webhooks secret format; anything else is used as raw bytes. */
export function standardWebhooksKey(secret: Uint8Array): Uint8Array {
  const text = Buffer.from(secret).toString("utf8");
  if (text.startsWith("whsec_")) {
    const key = fromBase64(text.slice(6));
    if (key) return key;
  }
  return secret;
}

function standardWebhooks(input: VerifyInput): VerifyOutcome {
  const family = has(input.headers, "webhook-signature") || !has(input.headers, "svix-signature") ? "webhook" : "svix";
  const signatures = header(input.headers, `${family}-signature`);
  if (signatures === undefined) return fail("missing_signature");
  const id = header(input.headers, `${family}-id`);
  const timestamp = header(input.headers, `${family}-timestamp`);
  const t = unixSeconds(timestamp);
  const v1 = signatures
    .trim()
    .split(/\s+/)
    .filter((entry) => entry.startsWith("v1,"))
    .map((entry) => fromBase64(entry.slice(3)))
    .filter((sig): sig is Buffer => sig !== undefined);
  if (!id || t === undefined || v1.length === 0) return fail("malformed_signature");
  const expected = hmac("sha256", standardWebhooksKey(input.secret), `${id}.${timestamp!.trim()}.`, input.body);
  return timed(v1.some((sig) => sameBytes(sig, expected)), t, input);
}

function generic(input: VerifyInput): VerifyOutcome {
  const value = header(input.headers, input.genericSignatureHeader || DEFAULT_GENERIC_HEADER);
  if (value === undefined) return fail("missing_signature");
  const prefix = input.genericSignaturePrefix ?? "";
  const trimmed = value.trim();
  if (!trimmed.toLowerCase().startsWith(prefix.toLowerCase())) return fail("malformed_signature");
  const sig = fromHex(trimmed.slice(prefix.length));
  if (!sig) return fail("malformed_signature");
  return sameBytes(sig, hmac("sha256", input.secret, input.body)) ? VERIFIED : fail("signature_mismatch");
}

/** Verifies a capture with its provider's own published scheme. */
export function verifySignature(input: VerifyInput): VerifyOutcome {
  switch (input.provider) {
    case "stripe":
      return stripe(input);
    case "github":
      return github(input);
    case "slack":
      return slack(input);
    case "shopify":
      return shopify(input);
    case "standard_webhooks":
      return standardWebhooks(input);
    case "generic":
      return generic(input);
  }
}
