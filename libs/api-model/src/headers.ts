/**
 * Which captured header values are credentials (docs/design.md §3, the cURL export): shown as
 * `[MASKED]` until asked for. The dashboard masks the headers it shows by the same rule as the
 * export the gateway builds; apps/dashboard/src/header-mask.test.ts holds the two equal.
 */
export const HEADER_MASK = "[MASKED]";

const ALWAYS_MASKED = new Set(["authorization", "proxy-authorization", "cookie", "set-cookie"]);
const MASKED_PARTS = ["token", "secret", "signature", "api-key", "apikey", "hmac"];

/** `extra`: the endpoint's own signature header (genericSignatureHeader), masked too. */
export function isSensitiveHeader(name: string, extra: readonly string[] = []): boolean {
  const lower = name.toLowerCase();
  return ALWAYS_MASKED.has(lower) || MASKED_PARTS.some((part) => lower.includes(part)) || extra.some((e) => e.toLowerCase() === lower);
}
