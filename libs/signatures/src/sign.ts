import type { HeaderPair } from "./headers.js";
import { providerScheme, type Provider } from "./registry.js";
import type { SignInput } from "./types.js";

/**
 * The signature headers to set for a re-signed replay, exactly as the provider would send them
 * with the fresh `nowMs` timestamp. They replace every header signatureHeaderNames lists.
 */
export function signHeaders(input: SignInput): HeaderPair[] {
  return providerScheme(input.provider).sign(input);
}

/**
 * Lower-case names of the headers signHeaders may set for this provider, to drop from the
 * original. For Standard Webhooks both header families are listed, so a stale signature in the
 * other spelling cannot survive next to the fresh one.
 */
export function signatureHeaderNames(provider: Provider, genericSignatureHeader?: string): string[] {
  return providerScheme(provider).signedHeaderNames({ genericSignatureHeader });
}
