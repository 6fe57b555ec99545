import type { CapturedEvent, Endpoint } from "@whc/contracts";
import { targetUrl, type DestinationSettings } from "@whc/api-model";
import { destinationSettingsOf } from "@whc/api-model/present";

/** How a relay or proxy endpoint forwards; absent for every other endpoint. */
export interface Forwarding {
  mode: "relay" | "proxy";
  settings: DestinationSettings;
}

/**
 * The endpoint's forwarding, parsed once per lookup. Settings that do not parse (they were
 * validated when saved) read as none: the endpoint then captures without forwarding.
 */
export function forwardingOf(endpoint: Endpoint): Forwarding | undefined {
  const mode = endpoint.operatingMode;
  if (mode !== "relay" && mode !== "proxy") return undefined;
  const settings = destinationSettingsOf(endpoint.forwardJson);
  return settings && { mode, settings };
}

/**
 * Marks the capture for forwarding in its append: pending towards its target (sealed with the
 * capture before it is sent), and for relay in the outbox (due at once) in the same transaction.
 */
export function withForward(capture: CapturedEvent, forwarding: Forwarding, rest: string): void {
  capture.forwardTarget = targetUrl(forwarding.settings, rest);
  capture.forwardScheduled = forwarding.mode === "relay";
}
