import type { HeaderPair } from "./headers.js";
import { DETECTION_ORDER, providers, type Provider } from "./registry.js";

/** Which provider sent this, from its headers; undefined when nothing identifies one. */
export function detectProvider(headers: readonly HeaderPair[]): Provider | undefined {
  return DETECTION_ORDER.find((name) => providers[name].detect(headers));
}
