import type { DeliveryState } from "@whc/api-model";

/** One stored event, as every internal call names it. */
export interface EventRef {
  accountId: string;
  endpointId: string;
  eventId: string;
}

/** One delivery of a stored event: the event and the destination (design §17). */
export interface DeliveryRef extends EventRef {
  destinationId: string;
}

/**
 * How a recorded attempt moves its delivery (ADR 0014). `worker`: the outbox worker's
 * verdict, applied only while its claim (owner, attempt n) still holds; the attempt is
 * recorded either way. `direct` (manual, proxy, cli): a 2xx makes the delivery delivered (and
 * takes it out of the outbox); otherwise a delivery waiting in the outbox (pending with
 * nextAttemptAt) stays as it is, and any other becomes failed.
 */
export type AttemptTransition =
  | { kind: "worker"; owner: string; state: DeliveryState; nextAttemptAt?: number | undefined }
  | { kind: "direct" };
