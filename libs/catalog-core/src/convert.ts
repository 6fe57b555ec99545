import { create } from "@bufbuild/protobuf";
import {
  ApiKeySchema,
  DestinationBreakerSchema,
  EndpointSchema,
  EventSchema,
  ForwardAttemptSchema,
  ForwardSchema,
  SchemaSchema,
  type ApiKey,
  type CapturedEvent,
  type DestinationBreaker,
  type Endpoint,
  type EndpointPatch as EndpointPatchProto,
  type Event,
  type Forward,
  type ForwardAttempt,
  type SealedBody as SealedBodyProto,
  type Schema,
} from "@whc/contracts";
import type { ApiKeyRecord, EndpointPatch, EndpointRecord, EventRecord, EventSummaryRecord, AttemptRecord, DeliveryRecord, NewEvent, SchemaRecord, SealedBody } from "./types.js";
import { typesOfMask, type AttemptTrigger } from "@whc/api-model";
import { aggregateOf, legacyDestinationId } from "./delivery.js";
import type { BreakerView } from "./breaker.js";

/** A destination's breaker as the Endpoint carries it (design §18). */
export function breakerToProto(b: BreakerView): DestinationBreaker {
  return create(DestinationBreakerSchema, {
    destinationId: b.destinationId,
    endpointId: b.endpointId,
    accountId: b.accountId,
    state: b.state,
    ...(b.since !== undefined ? { sinceMs: BigInt(b.since) } : {}),
    consecutiveFailures: b.consecutiveFailures,
    held: BigInt(b.held),
    ...(b.state === "open" && b.nextProbeAt !== undefined ? { nextProbeAtMs: BigInt(b.nextProbeAt) } : {}),
  });
}
import { packSearchTokens } from "@whc/sealing";

const NO_TOKENS = new Uint8Array(0);

export function apiKeyToProto(key: ApiKeyRecord): ApiKey {
  return create(ApiKeySchema, {
    id: key.id,
    accountId: key.accountId,
    accountName: key.accountName,
    name: key.name,
    prefix: key.prefix,
    scopes: key.scopes,
    endpointIds: key.endpointIds,
    createdAtMs: BigInt(key.createdAt),
    ...(key.expiresAt !== undefined ? { expiresAtMs: BigInt(key.expiresAt) } : {}),
    ...(key.lastUsedAt !== undefined ? { lastUsedAtMs: BigInt(key.lastUsedAt) } : {}),
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
    forwardJson: e.forwardJson,
    targetSecretSet: e.sealedTargetSecret !== undefined && e.sealedTargetSecret.length > 0,
    ...(includeSecret && e.sealedTargetSecret ? { sealedTargetSecret: e.sealedTargetSecret } : {}),
    ...(includeSecret && e.sealedDestinationSecrets ? { sealedDestinationSecrets: e.sealedDestinationSecrets } : {}),
    inboundJson: e.inboundJson,
    ...(includeSecret && e.sealedInbound ? { sealedInbound: e.sealedInbound } : {}),
    rejectedCount: BigInt(e.rejectedCount),
    redactJson: e.redactJson,
    dedupeJson: e.dedupeJson,
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
    forwardJson: e.forwardJson,
    sealedTargetSecret: e.sealedTargetSecret.length > 0 ? e.sealedTargetSecret : undefined,
    sealedDestinationSecrets: e.sealedDestinationSecrets.length > 0 ? e.sealedDestinationSecrets : undefined,
    inboundJson: e.inboundJson,
    sealedInbound: e.sealedInbound.length > 0 ? e.sealedInbound : undefined,
    rejectedCount: 0,
    redactJson: e.redactJson,
    dedupeJson: e.dedupeJson,
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
    forwardJson: p.forwardJson,
    sealedTargetSecret: p.sealedTargetSecret,
    clearTargetSecret: p.clearTargetSecret,
    sealedDestinationSecrets: p.sealedDestinationSecrets,
    inboundJson: p.inboundJson,
    sealedInbound: p.sealedInbound,
    redactJson: p.redactJson,
    dedupeJson: p.dedupeJson,
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
    sealedRequest: e.sealedRequest && e.sealedRequest.ciphertext.length > 0 ? sealedFromProto(e.sealedRequest) : undefined,
    searchTokens: packSearchTokens(e.searchTokens),
    diagnosticJson: e.diagnosticJson,
    forwardedResponseJson: e.forwardedResponseJson,
    sequenceStatuses: e.sequenceStatuses,
    forward: e.forward ? { scheduled: e.forwardScheduled, deliveries: [{ destinationId: legacyDestinationId(e.endpointId), target: e.forward.target }] } : undefined,
    redactionsJson: e.redactionsJson,
  };
}

/**
 * A capture's deliveries: one per destination it matched; an ingest from before destinations
 * sends one target alone, the endpoint's one destination of that time (legacyDestinationId).
 */
function capturedForward(c: CapturedEvent): NewEvent["forward"] {
  if (c.deliveries.length > 0) return { scheduled: c.forwardScheduled, deliveries: c.deliveries.map((d) => ({ destinationId: d.destinationId, target: d.target })) };
  if (c.forwardTarget) return { scheduled: c.forwardScheduled, deliveries: [{ destinationId: legacyDestinationId(c.endpointId), target: c.forwardTarget }] };
  return undefined;
}

/**
 * A capture in the lean append form. Its search tokens stay packed as they came (the service
 * refuses a buffer that is no whole number of tokens); a store splits them where it needs to.
 */
export function newEventFromCapture(c: CapturedEvent): NewEvent {
  // Literals, not spreads of the key: this runs for every capture (design §20).
  const { wrappedKey, keyId } = c;
  return {
    accountId: c.accountId,
    endpointId: c.endpointId,
    method: c.method,
    path: "",
    headers: [],
    remoteIp: c.remoteIp,
    canonicalEventType: c.canonicalEventType,
    provider: c.provider,
    verification: c.verification,
    verificationFailureReason: c.verificationFailureReason,
    responseCode: c.responseCode,
    truncated: c.truncated,
    originalSizeBytes: Number(c.originalSizeBytes),
    body: c.body === undefined ? undefined : { ciphertext: c.body, wrappedKey, keyId },
    sealedRequest: c.sealedRequest.length > 0 ? { ciphertext: c.sealedRequest, wrappedKey, keyId } : undefined,
    searchTokens: c.body === undefined ? NO_TOKENS : c.searchTokens,
    diagnosticJson: c.diagnosticJson,
    forwardedResponseJson: c.forwardedResponseJson,
    sequenceStatuses: c.sequenceStatuses,
    forward: capturedForward(c),
    redactionsJson: c.redactionsJson,
    dedupe: c.dedupeKey.length > 0 ? { keyHash: c.dedupeKey, windowMs: Number(c.dedupeWindowMs) } : undefined,
  };
}

const sealedToProto = (b: SealedBody) => ({ ciphertext: b.ciphertext, wrappedKey: b.wrappedKey, keyId: b.keyId });
const sealedFromProto = (b: SealedBodyProto): SealedBody => ({ ciphertext: b.ciphertext, wrappedKey: b.wrappedKey, keyId: b.keyId });

export function forwardAttemptToProto(a: AttemptRecord): ForwardAttempt {
  return create(ForwardAttemptSchema, {
    n: a.n,
    trigger: a.trigger,
    atMs: BigInt(a.at),
    url: a.url,
    durationMs: BigInt(a.durationMs),
    status: a.status,
    headers: a.headers.map(([name, value]) => ({ name, value })),
    ...(a.body ? { body: sealedToProto(a.body) } : {}),
    bodyTruncated: a.bodyTruncated,
    error: a.error,
    requestSha256: a.requestSha256,
    message: a.message,
  });
}

/** The trigger is checked by the service before it gets here. An empty sealed body is none. */
export function forwardAttemptFromProto(a: ForwardAttempt): AttemptRecord {
  return {
    n: a.n,
    trigger: a.trigger as AttemptTrigger,
    at: Number(a.atMs),
    url: a.url,
    durationMs: Number(a.durationMs),
    status: a.status,
    headers: a.headers.map((h) => [h.name, h.value] as const),
    body: a.body && a.body.ciphertext.length > 0 ? sealedFromProto(a.body) : undefined,
    bodyTruncated: a.bodyTruncated,
    error: a.error,
    requestSha256: a.requestSha256,
    message: a.message,
  };
}

export function forwardToProto(f: DeliveryRecord): Forward {
  return create(ForwardSchema, {
    destinationId: f.destinationId,
    state: f.state,
    target: f.target,
    ...(f.nextAttemptAt !== undefined ? { nextAttemptAtMs: BigInt(f.nextAttemptAt) } : {}),
    attempts: f.attempts.map(forwardAttemptToProto),
  });
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
    ...(e.body ? { body: sealedToProto(e.body) } : {}),
    ...(e.sealedRequest ? { sealedRequest: sealedToProto(e.sealedRequest) } : {}),
    diagnosticJson: e.diagnosticJson,
    forwardedResponseJson: e.forwardedResponseJson,
    ...aggregateForward(e.deliveries),
    deliveries: e.deliveries.map(forwardToProto),
    redactionsJson: e.redactionsJson ?? "",
    schemaDriftJson: e.schemaDrift?.length ? JSON.stringify(e.schemaDrift) : "",
    duplicateOf: e.duplicateOf ?? "",
  });
}

export function schemaToProto(s: SchemaRecord): Schema {
  return create(SchemaSchema, {
    accountId: s.accountId,
    endpointId: s.endpointId,
    eventType: s.eventType,
    samples: BigInt(s.samples),
    firstSeenAtMs: BigInt(s.firstSeenAt),
    lastSeenAtMs: BigInt(s.lastSeenAt),
    paths: s.paths.map((p) => ({ path: p.path, types: typesOfMask(p.mask), present: BigInt(p.present) })),
  });
}

/**
 * Event.forward over several deliveries (design §17): the aggregate state, the first
 * delivery's target and the earliest time one is due; the attempts stay in `deliveries`.
 */
function aggregateForward(deliveries: readonly DeliveryRecord[]): { forward?: Forward } {
  const state = aggregateOf(deliveries);
  if (state === undefined) return {};
  const due = deliveries.flatMap((d) => (d.nextAttemptAt === undefined ? [] : [d.nextAttemptAt]));
  return {
    forward: create(ForwardSchema, {
      state,
      target: deliveries[0]?.target ?? "",
      ...(due.length > 0 ? { nextAttemptAtMs: BigInt(Math.min(...due)) } : {}),
    }),
  };
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
    // A list shows the state only: no attempts, no target.
    ...(e.forwardState ? { forward: { state: e.forwardState } } : {}),
    duplicateOf: e.duplicateOf ?? "",
  });
}
