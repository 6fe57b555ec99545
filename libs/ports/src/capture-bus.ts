import type { EventSummaryJson } from "@whc/api-model";

export interface CaptureNotice {
  accountId: string;
  endpointId: string;
  summary: EventSummaryJson;
}

export type Unsubscribe = () => void;

/**
 * Capture notifications (ingest -> gateway `wait`) and endpoint changes (gateway -> ingest
 * caches). Delivery is best effort: publishing never fails a capture, and readers fall
 * back to re-querying when the bus is down (`connected()` false).
 */
export interface CaptureBus {
  readonly kind: string;
  publishCapture(notice: CaptureNotice): void;
  /**
   * Whether a capture's notice published now would reach anyone (a bus within one process knows);
   * absent on a bus across processes, whose subscribers are elsewhere: publish. Lets a publisher
   * skip building a notice nobody reads.
   */
  listensToCaptures?(accountId: string, endpointId: string): boolean;
  subscribeCaptures(accountId: string, endpointId: string, onNotice: (notice: CaptureNotice) => void): Unsubscribe;
  publishEndpointChanged(endpointId: string): void;
  subscribeEndpointChanges(onChange: (endpointId: string) => void): Unsubscribe;
  /** Relay deliveries entered the outbox (ingest -> replay): the outbox workers look now. */
  publishOutboxWake(): void;
  subscribeOutboxWake(onWake: () => void): Unsubscribe;
  connected(): boolean;
  close(): Promise<void>;
}

export function captureSubject(accountId: string, endpointId: string): string {
  return `whc.capture.${accountId}.${endpointId}`;
}

export const ENDPOINT_CHANGED_SUBJECT = "whc.endpoint.changed";

export const OUTBOX_WAKE_SUBJECT = "whc.forward.due";
