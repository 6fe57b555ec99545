import { create } from "@bufbuild/protobuf";
import { ForwardSchema, type Endpoint, type Event } from "@whc/contracts";
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
 * Marks the event for forwarding in its append: pending towards the target, and for relay
 * in the outbox (due at once) in the same transaction.
 */
export function withForward(event: Event, forwarding: Forwarding, rest: string): void {
  event.forward = create(ForwardSchema, { state: "pending", target: targetUrl(forwarding.settings, rest) });
  event.forwardScheduled = forwarding.mode === "relay";
}
