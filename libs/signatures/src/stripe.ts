import { anyEqual, decodeHex, hmac, SHA256_BYTES } from "./crypto.js";
import { header, type HeaderPair } from "./headers.js";
import { failed, parseUnixSeconds, timedOutcome, unixSeconds } from "./outcome.js";
import type { VerifyInput, VerifyOutcome } from "./types.js";

export const STRIPE_HEADER_NAMES = ["stripe-signature"];

/**
 * `Stripe-Signature: t=<unix s>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>[,v1=...][,v0=...]`.
 * Several v1 entries appear while a secret is being rolled, and any one of them verifies; v0 is
 * Stripe's legacy test-mode scheme and is ignored, as are v1 entries that are not a SHA-256 hex
 * digest. If `t` repeats, the first one counts.
 */
export function verifyStripe(input: VerifyInput): VerifyOutcome {
  const value = header(input.headers, "Stripe-Signature");
  if (value === undefined) return failed("missing_signature");
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
  if (t === undefined || candidates.length === 0) return failed("malformed_signature");
  const expected = hmac("sha256", input.secret, `${timestamp}.`, input.body);
  return timedOutcome(anyEqual(candidates, expected), t, input);
}

export function signStripe(secret: Uint8Array, body: Uint8Array, nowMs: number): HeaderPair[] {
  const t = unixSeconds(nowMs);
  return [["Stripe-Signature", `t=${t},v1=${hmac("sha256", secret, `${t}.`, body).toString("hex")}`]];
}
