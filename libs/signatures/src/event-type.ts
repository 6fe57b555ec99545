import type { HeaderPair } from "./headers.js";
import { providerScheme, type Provider } from "./registry.js";

export const MAX_EVENT_TYPE_LENGTH = 200;

/** At most 200 UTF-16 code units, never ending in half a surrogate pair. */
function capped(text: string): string {
  if (text.length <= MAX_EVENT_TYPE_LENGTH) return text;
  const cut = text.slice(0, MAX_EVENT_TYPE_LENGTH);
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
}

/** The provider's event type name for this capture, "" when unknown. */
export function canonicalEventType(provider: Provider, headers: readonly HeaderPair[], body: Uint8Array): string {
  const type = providerScheme(provider).eventType(headers, body);
  return type ? capped(type) : "";
}
