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

/**
 * Headers on every answer that carries a tenant's bytes (a captured body, an endpoint's
 * configured `response.body`, a proxy destination's answer) to what may be a browser
 * (docs/design.md §14): never sniffed into another type, and if opened as a page, sandboxed
 * (no script, no same-origin access to the deployment's cookies or storage). As name, value
 * pairs, lower-case, to add to a response.
 */
export const UNTRUSTED_CONTENT_HEADERS: readonly (readonly [string, string])[] = [
  ["x-content-type-options", "nosniff"],
  ["content-security-policy", "sandbox"],
];
const UNTRUSTED_NAMES = new Set(UNTRUSTED_CONTENT_HEADERS.map(([name]) => name));

/**
 * `headers` as name, value pairs with ours for untrusted content last, instead of any the
 * tenant's configuration or destination gave under those names (a weaker policy of theirs
 * must not stand beside ours).
 */
export function withUntrustedContentHeaders(headers: readonly (readonly [string, string])[]): [string, string][] {
  const kept = headers.filter(([name]) => !UNTRUSTED_NAMES.has(name.toLowerCase())) as [string, string][];
  return [...kept, ...(UNTRUSTED_CONTENT_HEADERS as [string, string][])];
}
