import { hasHeader, type HeaderPair } from "./headers.js";
import type { Provider } from "./types.js";

/** Headers only that provider sends, checked in this order; the first family present wins. */
const SIGNS: readonly (readonly [Provider, readonly string[]])[] = [
  ["stripe", ["stripe-signature"]],
  ["github", ["x-github-event", "x-hub-signature-256"]],
  ["slack", ["x-slack-signature", "x-slack-request-timestamp"]],
  ["shopify", ["x-shopify-hmac-sha256", "x-shopify-topic"]],
  ["standard_webhooks", ["webhook-signature", "webhook-id", "svix-signature", "svix-id"]],
];

/** Which provider sent this, from its headers; undefined when nothing identifies one. */
export function detectProvider(headers: readonly HeaderPair[]): Provider | undefined {
  return SIGNS.find(([, names]) => hasHeader(headers, ...names))?.[0];
}
