import { bytesEqual, hmac, prefixedHexDigest } from "./crypto.js";
import { header, type HeaderPair } from "./headers.js";
import { failed, parseUnixSeconds, timedOutcome, unixSeconds } from "./outcome.js";
import type { VerifyInput, VerifyOutcome } from "./types.js";

export const SLACK_HEADER_NAMES = ["x-slack-signature", "x-slack-request-timestamp"];

/**
 * `X-Slack-Signature: v0=<hex HMAC-SHA256(secret, "v0:<X-Slack-Request-Timestamp>:<body>")>`.
 * A signature without a usable timestamp header cannot be checked, so it counts as malformed.
 */
export function verifySlack(input: VerifyInput): VerifyOutcome {
  const value = header(input.headers, "X-Slack-Signature");
  if (value === undefined) return failed("missing_signature");
  const timestamp = header(input.headers, "X-Slack-Request-Timestamp");
  const t = parseUnixSeconds(timestamp);
  const digest = prefixedHexDigest(value, "v0=");
  if (t === undefined || digest === undefined) return failed("malformed_signature");
  const expected = hmac("sha256", input.secret, `v0:${timestamp}:`, input.body);
  return timedOutcome(bytesEqual(digest, expected), t, input);
}

export function signSlack(secret: Uint8Array, body: Uint8Array, nowMs: number): HeaderPair[] {
  const t = unixSeconds(nowMs);
  return [
    ["X-Slack-Request-Timestamp", String(t)],
    ["X-Slack-Signature", `v0=${hmac("sha256", secret, `v0:${t}:`, body).toString("hex")}`],
  ];
}
