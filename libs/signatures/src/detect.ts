import type { HeaderPair } from "./headers.js";
import { DETECTION_ORDER, providers, type Provider } from "./registry.js";

/** Which provider sent this, from its headers; undefined when nothing identifies one. */
export function detectProvider(headers: readonly HeaderPair[]): Provider | undefined {
  // A loop, not find() with a closure: this runs on every capture of a generic endpoint.
  for (const name of DETECTION_ORDER) if (providers[name].detect(headers)) return name;
  return undefined;
}
