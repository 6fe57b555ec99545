/**
 * Ports that several domains share: capture notifications (ingest publishes, the gateway's
 * `wait` subscribes), egress leases (replay and forwarding), and the words catalog and replay
 * share about deliveries (EventRef, AttemptTransition). A domain's own ports
 * stay in it (CatalogStore in @whc/catalog-core). Adapters live in @whc/messaging.
 */
export type { CaptureBus, CaptureNotice, Unsubscribe } from "./capture-bus.js";
export { captureSubject, ENDPOINT_CHANGED_SUBJECT, OUTBOX_WAKE_SUBJECT } from "./capture-bus.js";
export type { EgressLease, EgressLeases } from "./egress-leases.js";
export type { EventRef, DeliveryRef, AttemptTransition } from "./delivery.js";
