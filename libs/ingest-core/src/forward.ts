import { z } from "zod";
import { create } from "@bufbuild/protobuf";
import { ForwardSchema, type Endpoint, type Event } from "@whc/contracts";
import { forwardSettings } from "@whc/api-model";

/** The stored forward settings (design §11) without the write-only secret; unknown keys are ignored. */
const storedForward = z.object(forwardSettings.omit({ targetSecret: true }).shape);
export type ForwardConfig = z.output<typeof storedForward>;

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
  if ((mode !== "relay" && mode !== "proxy") || !endpoint.forwardJson) return undefined;
  try {
    const parsed = storedForward.safeParse(JSON.parse(endpoint.forwardJson));
    return parsed.success ? { mode, settings: parsed.data } : undefined;
  } catch {
    return undefined;
  }
}

/** Where a capture goes: the destination, plus the capture's sub-path and query with keepPath. */
export function forwardTarget(settings: ForwardConfig, rest: string): string {
  return settings.keepPath ? settings.url + rest : settings.url;
}

/**
 * Marks the event for forwarding in its append: pending towards the target, and for relay
 * in the outbox (due at once) in the same transaction.
 */
export function withForward(event: Event, forwarding: Forwarding, rest: string): void {
  event.forward = create(ForwardSchema, { state: "pending", target: forwardTarget(forwarding.settings, rest) });
  event.forwardScheduled = forwarding.mode === "relay";
}
