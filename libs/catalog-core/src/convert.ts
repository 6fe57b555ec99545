import { create } from "@bufbuild/protobuf";
import {
  ApiKeySchema,
  EndpointSchema,
  EventSchema,
  type ApiKey,
  type Endpoint,
  type EndpointPatch as EndpointPatchProto,
  type Event,
} from "@whc/contracts";
import type { ApiKeyRecord, EndpointPatch, EndpointRecord, EventRecord, EventSummaryRecord, NewEvent } from "./types.js";

export function apiKeyToProto(key: ApiKeyRecord): ApiKey {
  return create(ApiKeySchema, {
    id: key.id,
    accountId: key.accountId,
    accountName: key.accountName,
    prefix: key.prefix,
    createdAtMs: BigInt(key.createdAt),
    ...(key.revokedAt !== undefined ? { revokedAtMs: BigInt(key.revokedAt) } : {}),
  });
}

export function endpointToProto(e: EndpointRecord, includeSecret = false): Endpoint {
  return create(EndpointSchema, {
    id: e.id,
    accountId: e.accountId,
    slug: e.slug,
    displayName: e.displayName,
    operatingMode: e.operatingMode,
    status: e.status,
    replayFromDashboard: e.replayFromDashboard,
    replayFromApi: e.replayFromApi,
    provider: e.provider,
    secretSet: e.sealedSecret !== undefined && e.sealedSecret.length > 0,
    genericSignatureHeader: e.genericSignatureHeader,
    genericSignaturePrefix: e.genericSignaturePrefix,
    source: e.source,
    createdAtMs: BigInt(e.createdAt),
    updatedAtMs: BigInt(e.updatedAt),
    eventCount: BigInt(e.eventCount),
    ...(e.lastEventAt !== undefined ? { lastEventAtMs: BigInt(e.lastEventAt) } : {}),
    ...(e.lastPurgedAt !== undefined ? { lastPurgedAtMs: BigInt(e.lastPurgedAt) } : {}),
    purgedEventCount: BigInt(e.purgedEventCount),
    responseJson: e.responseJson,
    ...(e.secretRotatedAt !== undefined ? { secretRotatedAtMs: BigInt(e.secretRotatedAt) } : {}),
    ...(includeSecret && e.sealedSecret ? { sealedSecret: e.sealedSecret } : {}),
    ...(includeSecret && e.sealedPreviousSecret ? { sealedPreviousSecret: e.sealedPreviousSecret } : {}),
  });
}

export function endpointFromProto(e: Endpoint): Omit<EndpointRecord, "id" | "createdAt" | "updatedAt"> {
  return {
    accountId: e.accountId,
    slug: e.slug,
    displayName: e.displayName,
    operatingMode: e.operatingMode,
    status: e.status,
    replayFromDashboard: e.replayFromDashboard,
    replayFromApi: e.replayFromApi,
    provider: e.provider,
    sealedSecret: e.sealedSecret.length > 0 ? e.sealedSecret : undefined,
    genericSignatureHeader: e.genericSignatureHeader,
    genericSignaturePrefix: e.genericSignaturePrefix,
    source: e.source,
    eventCount: 0,
    purgedEventCount: 0,
    responseJson: e.responseJson,
    sequenceCounter: 0,
  };
}

/** An empty sealed secret is not a secret: the service refuses it before it gets here. */
export function endpointPatchFromProto(p: EndpointPatchProto): EndpointPatch {
  return {
    displayName: p.displayName,
    status: p.status,
    operatingMode: p.operatingMode,
    replayFromDashboard: p.replayFromDashboard,
    replayFromApi: p.replayFromApi,
    provider: p.provider,
    genericSignatureHeader: p.genericSignatureHeader,
    genericSignaturePrefix: p.genericSignaturePrefix,
    sealedSecret: p.sealedSecret,
    clearSecret: p.clearSecret,
    responseJson: p.responseJson,
    resetSequence: p.resetSequence,
  };
}

export function newEventFromProto(e: Event): NewEvent {
  return {
    accountId: e.accountId,
    endpointId: e.endpointId,
    method: e.method,
    path: e.path,
    headers: e.headers.map((h) => [h.name, h.value] as const),
    remoteIp: e.remoteIp,
    canonicalEventType: e.canonicalEventType,
    provider: e.provider,
    verification: e.verification,
    verificationFailureReason: e.verificationFailureReason,
    responseCode: e.responseCode,
    truncated: e.truncated,
    originalSizeBytes: Number(e.originalSizeBytes),
    body:
      e.bodyStored && e.body
        ? { ciphertext: e.body.ciphertext, wrappedKey: e.body.wrappedKey, keyId: e.body.keyId }
        : undefined,
    searchTokens: e.searchTokens,
    diagnosticJson: e.diagnosticJson,
    forwardedResponseJson: e.forwardedResponseJson,
    sequenceStatuses: e.sequenceStatuses,
  };
}

export function eventToProto(e: EventRecord): Event {
  return create(EventSchema, {
    id: e.id,
    accountId: e.accountId,
    endpointId: e.endpointId,
    receivedAtMs: BigInt(e.receivedAt),
    method: e.method,
    path: e.path,
    headers: e.headers.map(([name, value]) => ({ name, value })),
    remoteIp: e.remoteIp,
    canonicalEventType: e.canonicalEventType,
    provider: e.provider,
    verification: e.verification,
    verificationFailureReason: e.verificationFailureReason,
    responseCode: e.responseCode,
    ...(e.readAt !== undefined ? { readAtMs: BigInt(e.readAt) } : {}),
    truncated: e.truncated,
    originalSizeBytes: BigInt(e.originalSizeBytes),
    bodyStored: e.body !== undefined,
    ...(e.body ? { body: { ciphertext: e.body.ciphertext, wrappedKey: e.body.wrappedKey, keyId: e.body.keyId } } : {}),
    diagnosticJson: e.diagnosticJson,
    forwardedResponseJson: e.forwardedResponseJson,
  });
}

export function eventSummaryToProto(e: EventSummaryRecord): Event {
  return create(EventSchema, {
    id: e.id,
    accountId: e.accountId,
    endpointId: e.endpointId,
    receivedAtMs: BigInt(e.receivedAt),
    method: e.method,
    path: e.path,
    remoteIp: e.remoteIp,
    canonicalEventType: e.canonicalEventType,
    provider: e.provider,
    verification: e.verification,
    verificationFailureReason: e.verificationFailureReason,
    responseCode: e.responseCode,
    ...(e.readAt !== undefined ? { readAtMs: BigInt(e.readAt) } : {}),
    truncated: e.truncated,
    originalSizeBytes: BigInt(e.originalSizeBytes),
    bodyStored: e.bodyStored,
    ...(e.keyId ? { body: { keyId: e.keyId } } : {}),
  });
}
