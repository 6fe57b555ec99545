import { genericHeaderName, signGeneric } from "./generic.js";
import { GITHUB_HEADER_NAMES, signGitHub } from "./github.js";
import type { HeaderPair } from "./headers.js";
import { SHOPIFY_HEADER_NAMES, signShopify } from "./shopify.js";
import { SLACK_HEADER_NAMES, signSlack } from "./slack.js";
import { signStandardWebhooks, STANDARD_WEBHOOKS_HEADER_NAMES } from "./standard-webhooks.js";
import { signStripe, STRIPE_HEADER_NAMES } from "./stripe.js";
import type { Provider, SignInput } from "./types.js";

/**
 * The signature headers to set for a re-signed replay, exactly as the provider would send them
 * with the fresh `nowMs` timestamp. They replace every header signatureHeaderNames lists.
 */
export function signHeaders(input: SignInput): HeaderPair[] {
  const { secret, body, nowMs } = input;
  switch (input.provider) {
    case "stripe":
      return signStripe(secret, body, nowMs);
    case "github":
      return signGitHub(secret, body);
    case "slack":
      return signSlack(secret, body, nowMs);
    case "shopify":
      return signShopify(secret, body);
    case "standard_webhooks":
      return signStandardWebhooks(secret, body, nowMs, input.headers);
    case "generic":
      return signGeneric(secret, body, input.genericSignatureHeader, input.genericSignaturePrefix);
  }
}

/**
 * Lower-case names of the headers signHeaders may set for this provider, to drop from the
 * original. For Standard Webhooks both header families are listed, so a stale signature in the
 * other spelling cannot survive next to the fresh one.
 */
export function signatureHeaderNames(provider: Provider, genericSignatureHeader?: string): string[] {
  switch (provider) {
    case "stripe":
      return [...STRIPE_HEADER_NAMES];
    case "github":
      return [...GITHUB_HEADER_NAMES];
    case "slack":
      return [...SLACK_HEADER_NAMES];
    case "shopify":
      return [...SHOPIFY_HEADER_NAMES];
    case "standard_webhooks":
      return [...STANDARD_WEBHOOKS_HEADER_NAMES];
    case "generic":
      return [genericHeaderName(genericSignatureHeader).toLowerCase()];
  }
}
