import type { CapturedEvent, Event } from "@whc/contracts";
import { packSearchTokens } from "@whc/sealing";

/**
 * The lean append form of a capture ingest has built as an Event (design §8): only the
 * fields the store keeps, the data key once for the sealed request and body (they share it,
 * ADR 0009), and the search tokens packed into one buffer. Built as a plain message, without
 * protobuf-es `create()`, as it is made once per capture.
 */
export function capturedEventOf(event: Event): CapturedEvent {
  const body = event.bodyStored ? event.body : undefined;
  const key = body ?? event.sealedRequest;
  return {
    $typeName: "webhookcapture.catalog.v1.CapturedEvent",
    accountId: event.accountId,
    endpointId: event.endpointId,
    method: event.method,
    remoteIp: event.remoteIp,
    canonicalEventType: event.canonicalEventType,
    provider: event.provider,
    verification: event.verification,
    verificationFailureReason: event.verificationFailureReason,
    responseCode: event.responseCode,
    truncated: event.truncated,
    originalSizeBytes: event.originalSizeBytes,
    wrappedKey: key?.wrappedKey ?? new Uint8Array(0),
    keyId: key?.keyId ?? "",
    sealedRequest: event.sealedRequest?.ciphertext ?? new Uint8Array(0),
    body: body?.ciphertext,
    searchTokens: packSearchTokens(body ? event.searchTokens : []),
    diagnosticJson: event.diagnosticJson,
    forwardedResponseJson: event.forwardedResponseJson,
    sequenceStatuses: event.sequenceStatuses,
    forwardTarget: event.forward?.target ?? "",
    forwardScheduled: event.forwardScheduled,
  };
}
