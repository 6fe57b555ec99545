import { create } from "@bufbuild/protobuf";
import { ForwardSchema, type Endpoint, type Event } from "@whc/contracts";
import { forwardUrl } from "@whc/api-model";
import { forwardViewOf } from "@whc/api-model/present";

/** The stored forward settings (design §11), read as the Endpoint presents them. */
export interface ForwardConfig {
  url: string;
  keepPath: boolean;
  timeoutMs: number;
  maxAttempts: number;
}

/** How a relay or proxy endpoint forwards; absent for every other endpoint. */
export interface Forwarding {
  mode: "relay" | "proxy";
  settings: ForwardConfig;
}

/**
 * The endpoint's forwarding, parsed once per lookup. Settings that do not parse (they were
 * validated when saved) read as none: the endpoint then captures without forwarding.
 */
export function forwardingOf(endpoint: Endpoint): Forwarding | undefined {
  const mode = endpoint.operatingMode;
  if (mode !== "relay" && mode !== "proxy") return undefined;
  const view = forwardViewOf(endpoint.forwardJson, false);
  return view && { mode, settings: { url: view.url, keepPath: view.keepPath, timeoutMs: view.timeoutMs, maxAttempts: view.maxAttempts } };
}

/** Where a capture goes: the destination, plus the capture's sub-path and query with keepPath (as replay sends it). */
export function forwardTarget(settings: ForwardConfig, rest: string): string {
  return forwardUrl(settings, rest);
}

/**
 * Marks the event for forwarding in its append: pending towards the target, and for relay
 * in the outbox (due at once) in the same transaction.
 */
export function withForward(event: Event, forwarding: Forwarding, rest: string): void {
  event.forward = create(ForwardSchema, { state: "pending", target: forwardTarget(forwarding.settings, rest) });
  event.forwardScheduled = forwarding.mode === "relay";
}
