import type { CapturedEvent, Endpoint } from "@whc/contracts";
import { targetUrl, type DestinationSettings } from "@whc/api-model";
import { destinationsOf } from "@whc/api-model/present";
import { compileFilter, filterView, type CaptureParts, type CompiledFilter, type FilterView } from "@whc/routing";

/** A destination as ingest routes to it: its id, its settings and its filter, compiled. */
export interface RoutedDestination {
  id: string;
  settings: DestinationSettings;
  /** Undefined: every capture (no filter). */
  filter: CompiledFilter | undefined;
}

/** How a relay or proxy endpoint forwards; absent for every other endpoint. */
export interface Forwarding {
  mode: "relay" | "proxy";
  /** relay: 1 to 10, in the endpoint's order; proxy: its one destination, unfiltered. */
  destinations: RoutedDestination[];
}

/** A stored filter that cannot run (it was validated when saved): its destination gets nothing. */
const MATCH_NONE: CompiledFilter = { test: () => false };

function compiled(filter: Record<string, unknown> | undefined): CompiledFilter | undefined {
  if (!filter) return undefined;
  try {
    return compileFilter(filter as Parameters<typeof compileFilter>[0]);
  } catch {
    return MATCH_NONE;
  }
}

/**
 * The endpoint's forwarding, read once per lookup (design §17): its destinations with their
 * filters compiled. Settings that do not parse (they were validated when saved) read as none:
 * the endpoint then captures without forwarding. A proxy endpoint forwards to its first
 * destination, whatever filter it may hold (§17 refuses one there when saved).
 */
export function forwardingOf(endpoint: Endpoint): Forwarding | undefined {
  const mode = endpoint.operatingMode;
  if (mode !== "relay" && mode !== "proxy") return undefined;
  const destinations = destinationsOf(endpoint);
  if (destinations.length === 0) return undefined;
  const routed = (mode === "proxy" ? destinations.slice(0, 1) : destinations).map((d) => ({
    id: d.id,
    settings: { url: d.url, keepPath: d.keepPath, timeoutMs: d.timeoutMs, maxAttempts: d.maxAttempts },
    filter: mode === "proxy" ? undefined : compiled(d.filter),
  }));
  return { mode, destinations: routed };
}

/** Whether any destination has a filter: without one, routing builds no view at all. */
function filters(forwarding: Forwarding): boolean {
  return forwarding.destinations.some((d) => d.filter !== undefined);
}

/**
 * Marks the capture's deliveries in its append (design §17, ADR 0080): one per destination
 * whose filter the capture matches (evaluated here, on the stored, redacted capture, before it
 * is sealed: the catalog only sees it sealed), each pending towards its target (sealed with the
 * capture); for relay, in the outbox (due at once) in the append's transaction. Answers the
 * targets in the deliveries' order, for the sealer. The capture's view is built only when a
 * filter is there to read it, its body parsed only when a filter reads the body.
 */
export function withForward(capture: CapturedEvent, forwarding: Forwarding, parts: Omit<CaptureParts, "eventType" | "provider" | "verification">): string[] {
  let view: FilterView | undefined;
  const viewOf = () =>
    (view ??= filterView({ ...parts, eventType: capture.canonicalEventType, provider: capture.provider, verification: capture.verification }));
  const matched = filters(forwarding) ? forwarding.destinations.filter((d) => !d.filter || d.filter.test(viewOf())) : forwarding.destinations;
  capture.deliveries = matched.map((d) => ({ $typeName: "webhookcapture.catalog.v1.CapturedDelivery", destinationId: d.id, target: "" }));
  capture.forwardScheduled = forwarding.mode === "relay" && matched.length > 0;
  return matched.map((d) => targetUrl(d.settings, parts.rest));
}
