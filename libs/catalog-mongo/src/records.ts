import { Binary } from "mongodb";
import { NEVER_FORWARDED, appendedDeliveries, appendedForwardState, type RedeliveryJobRecord, claimableAt, deliveryRecordOf, type AlertChannelRecord, type AlertRecord, type ApiKeyRecord, type AuditRecord, type DeliveryProgress, type EndpointRecord, type EventRecord, type EventSummaryRecord, type AttemptRecord, type DeliveryRecord, type HeaderPair, type NewEvent, type ReplayAuditRecord, type Stamp } from "@whc/catalog-core";
import type { DeliveryState } from "@whc/api-model";
import { unpackSearchTokens } from "@whc/sealing";

/**
 * Documents <-> domain records. Each record type has one table of fields below; reading a
 * document and writing one are both derived from it. A table must name a field for every
 * field of its record type, so a field added to the domain type does not compile until this
 * adapter stores it. Fields keep their domain names, except `id`, which is `_id`.
 */
export type AnyDoc = { _id: string } & Record<string, any>;

/** How one field of a record is kept in a document. */
interface Field<T> {
  /** The document's field; the record's own name when absent. */
  readonly name?: string;
  read(value: unknown): T;
  /** Undefined leaves the field out (absent, not null: filters ask `$exists: false`). */
  write(value: T): unknown;
  /** Kept by the store itself (counters): an insert writes `initial`, or leaves the field out. */
  readonly kept?: { initial?: unknown };
}

type Fields<R> = { readonly [K in keyof R]-?: Field<R[K]> };

export const bytes = (value: Uint8Array) => new Binary(Buffer.from(value));
export const plain = (value: Binary | undefined | null) => (value ? new Uint8Array(value.buffer) : undefined);

const same = <T>(name?: string): Field<T> => ({ name, read: (v) => v as T, write: (v) => v });
/** Absent, or null, is undefined. */
const optional = <T>(): Field<T | undefined> => ({ read: (v) => (v ?? undefined) as T | undefined, write: (v) => v });
const binary = (): Field<Uint8Array> => ({ read: (v) => plain(v as Binary) as Uint8Array, write: (v) => bytes(v) });
/** Written as null when undefined (a field updates set and filters ask for); null reads as undefined. */
const nullable = <T>(): Field<T | undefined> => ({ read: (v) => (v ?? undefined) as T | undefined, write: (v) => v ?? null });
/** An empty value is left out, like an absent one. */
const optionalBinary = (): Field<Uint8Array | undefined> => ({
  read: (v) => plain(v as Binary | null),
  write: (v) => (v && v.length ? bytes(v) : undefined),
});
/** Absent in documents written before the field existed: read as `fallback`. */
const withDefault = <T>(fallback: T): Field<T> => ({ read: (v) => (v ?? fallback) as T, write: (v) => v });
/** An array of strings; absent in documents written before the field existed: a copy of `fallback`. */
const stringList = (fallback: readonly string[]): Field<string[]> => ({ read: (v) => [...((v as string[] | null | undefined) ?? fallback)], write: (v) => v });
const kept = <T>(field: Field<T>, initial?: unknown): Field<T> => ({ ...field, kept: initial === undefined ? {} : { initial } });

/** One record type's documents. */
class RecordDocs<R> {
  private readonly fields: readonly (readonly [string, string, Field<unknown>])[];

  constructor(fields: Fields<R>) {
    this.fields = Object.entries(fields as Record<string, Field<unknown>>).map(([key, f]) => [key, f.name ?? key, f] as const);
  }

  read(doc: AnyDoc): R {
    const record: Record<string, unknown> = {};
    for (const [key, name, f] of this.fields) record[key] = f.read(doc[name]);
    return record as R;
  }

  /** A new document for the record. */
  write(record: R): AnyDoc {
    const r = record as Record<string, unknown>;
    const doc: Record<string, unknown> = {};
    for (const [key, name, f] of this.fields) {
      const value = f.kept ? f.kept.initial : f.write(r[key]);
      if (value !== undefined) doc[name] = value;
    }
    return doc as AnyDoc;
  }
}

/** Keys stored before scopes (design §15) read as holding every scope, on every endpoint. */
export const apiKeyDocs = new RecordDocs<ApiKeyRecord>({
  id: same("_id"),
  accountId: same(),
  accountName: same(),
  name: withDefault(""),
  prefix: same(),
  keyHash: binary(),
  scopes: stringList(["*"]),
  endpointIds: stringList([]),
  createdAt: same(),
  expiresAt: optional(),
  lastUsedAt: optional(),
  revokedAt: optional(),
});

export const endpointDocs = new RecordDocs<EndpointRecord>({
  id: same("_id"),
  accountId: same(),
  slug: same(),
  displayName: same(),
  operatingMode: same(),
  status: same(),
  replayFromDashboard: same(),
  replayFromApi: same(),
  provider: same(),
  sealedSecret: optionalBinary(),
  sealedPreviousSecret: optionalBinary(),
  secretRotatedAt: optional(),
  genericSignatureHeader: same(),
  genericSignaturePrefix: same(),
  source: same(),
  createdAt: same(),
  updatedAt: same(),
  eventCount: kept(same(), 0),
  lastEventAt: kept(optional()),
  lastPurgedAt: kept(optional()),
  purgedEventCount: kept(same(), 0),
  responseJson: withDefault(""),
  // Moved by appends ($inc), reset by an update: never taken from a new record.
  sequenceCounter: kept(withDefault(0), 0),
  forwardJson: withDefault(""),
  sealedTargetSecret: optionalBinary(),
  sealedDestinationSecrets: optionalBinary(),
  inboundJson: withDefault(""),
  sealedInbound: optionalBinary(),
  // Moved by countRejections ($inc) only.
  rejectedCount: kept(withDefault(0), 0),
  redactJson: withDefault(""),
  dedupeJson: withDefault(""),
});

/** The fields a list shows; the rest of an event (headers, body, tokens...) is eventToDoc's. */
export const summaryDocs = new RecordDocs<EventSummaryRecord>({
  id: same("_id"),
  endpointId: same(),
  accountId: same(),
  receivedAt: same(),
  method: same(),
  path: same(),
  remoteIp: same(),
  canonicalEventType: same(),
  provider: same(),
  verification: same(),
  verificationFailureReason: same(),
  responseCode: same(),
  readAt: optional(),
  truncated: same(),
  originalSizeBytes: same(),
  bodyStored: same(),
  keyId: optional(),
  // The aggregate of the event's deliveries (design §17), which appends and the outbox write.
  forwardState: kept({ read: (v) => (v as DeliveryState | null | undefined) ?? undefined, write: () => undefined }),
  // Absent on an event that is no duplicate (the list filter asks `$exists`).
  duplicateOf: optional(),
});

export const auditDocs = new RecordDocs<ReplayAuditRecord>({
  id: same("_id"),
  accountId: same(),
  endpointId: same(),
  eventId: same(),
  keyId: same(),
  targetUrl: same(),
  mode: same(),
  result: same(),
  targetStatus: same(),
  networkFailureReason: same(),
  durationMs: same(),
  createdAt: same(),
  requestId: same(),
  client: same(),
});

/** One entry of the audit log (design §15): `endpointId` and `eventId` absent when it concerns none. */
export const auditLogDocs = new RecordDocs<AuditRecord>({
  id: same("_id"),
  accountId: same(),
  at: same(),
  action: same(),
  keyId: same(),
  keyPrefix: same(),
  remoteIp: same(),
  requestId: same(),
  endpointId: optional(),
  eventId: optional(),
  details: same(),
});

/** An alert channel (design §18): `lastDelivery` absent before the first alert. */
export const alertChannelDocs = new RecordDocs<AlertChannelRecord>({
  id: same("_id"),
  accountId: same(),
  name: same(),
  type: same(),
  url: same(),
  events: same(),
  endpointIds: same(),
  sealedSecret: optionalBinary(),
  createdAt: same(),
  lastDelivery: optional(),
});

/**
 * An alert of the alert outbox (ADR 0085). The fields a claim or an attempt clears are written
 * as null, never left out, so that `{field: null}` filters and `$set`s see one shape.
 */
export const alertDocs = new RecordDocs<AlertRecord>({
  id: same("_id"),
  accountId: same(),
  channelId: same(),
  type: same(),
  endpointId: same(),
  endpointSlug: same(),
  dataJson: same(),
  count: same(),
  firstAt: same(),
  lastAt: same(),
  dueAt: same(),
  state: same(),
  nextAttemptAt: nullable(),
  claimOwner: nullable(),
  claimUntil: nullable(),
  started: same(),
  lastAttemptAt: nullable(),
  lastStatus: same(),
  lastError: same(),
});

/**
 * A bulk redelivery job (ADR 0089). Fields a lease or a finish clears, and the cursors, are
 * written as null, never left out, so that claims' `{leaseUntil: null}` filters see one shape.
 * Each write also carries `rev`, the job's version (redelivery-documents.ts).
 */
export const redeliveryJobDocs = new RecordDocs<RedeliveryJobRecord>({
  id: same("_id"),
  accountId: same(),
  endpointId: same(),
  filter: same(),
  state: same(),
  total: same(),
  queued: same(),
  done: same(),
  failed: same(),
  walked: same(),
  cursor: nullable(),
  until: nullable(),
  createdAt: same(),
  updatedAt: same(),
  finishedAt: nullable(),
  createdByKeyId: same(),
  createdByKeyPrefix: same(),
  leaseOwner: nullable(),
  leaseUntil: nullable(),
});

/** Search tokens as stored and queried: distinct, as binaries. */
/** Distinct tokens, as the document's `tokens` array holds them (a query's, or a body's unpacked). */
export function tokensOf(tokens: readonly Uint8Array[]): Binary[] {
  const seen = new Map<string, Binary>();
  for (const t of tokens) seen.set(Buffer.from(t).toString("hex"), bytes(t));
  return [...seen.values()];
}

/** A new event's document, as stamped at commit, with the response code stored for it. */
export function eventToDoc(e: NewEvent, s: Stamp, responseCode = e.responseCode, duplicateOf?: string): AnyDoc {
  const { headers, body, sealedRequest, searchTokens, diagnosticJson, forwardedResponseJson, sequenceStatuses: _statuses, forward, redactionsJson, dedupe: _dedupe, ...fields } = e;
  const summary: EventSummaryRecord = {
    ...fields,
    responseCode,
    duplicateOf,
    id: s.id,
    receivedAt: s.receivedAt,
    readAt: undefined,
    bodyStored: body !== undefined,
    // The data key of the body and the sealed request (one per event, ADR 0009).
    keyId: (body ?? sealedRequest)?.keyId,
  };
  return {
    ...summaryDocs.write(summary),
    headers: headers.map(([n, v]) => [n, v]),
    ...(body ? { body: { ciphertext: bytes(body.ciphertext), wrappedKey: bytes(body.wrappedKey) }, tokens: tokensOf(unpackSearchTokens(searchTokens) ?? []) } : {}),
    // The wrapped key is the body's when there is one: kept once.
    ...(sealedRequest
      ? { request: { ciphertext: bytes(sealedRequest.ciphertext), ...(body ? {} : { wrappedKey: bytes(sealedRequest.wrappedKey) }) } }
      : {}),
    diagnosticJson,
    forwardedResponseJson,
    // Only on a capture that had something redacted.
    ...(redactionsJson ? { redactionsJson } : {}),
    // A relay capture's deliveries enter the outbox with its insert.
    ...(forward && forward.deliveries.length > 0 ? appendedDeliveryFields(forward, s.receivedAt, duplicateOf) : {}),
  };
}

/**
 * A new capture's deliveries, their aggregate (pending; a duplicate's: duplicate) and when the
 * first can be claimed (a duplicate's never: outside the outbox).
 */
function appendedDeliveryFields(forward: NonNullable<NewEvent["forward"]>, receivedAt: number, duplicateOf: string | undefined): AnyDoc | Record<string, unknown> {
  const appended = appendedDeliveries(forward, receivedAt, duplicateOf !== undefined);
  const claimable = appended.flatMap((d) => {
    const at = claimableAt(d.progress);
    return at === undefined ? [] : [at];
  });
  return {
    deliveries: appended.map((d) => deliveryToDoc(d.destinationId, d.progress, [])),
    forwardState: appendedForwardState({ forward }, duplicateOf),
    outboxAt: claimable.length > 0 ? Math.min(...claimable) : null,
  };
}

/** A whole event from its document (read without its tokens). */
export function eventFromDoc(d: AnyDoc): EventRecord {
  const { bodyStored: _b, keyId, forwardState: _f, ...summary } = summaryDocs.read(d);
  return {
    ...summary,
    headers: (d.headers as [string, string][]).map(([n, v]) => [n, v] as HeaderPair),
    body: d.body ? { ciphertext: plain(d.body.ciphertext)!, wrappedKey: plain(d.body.wrappedKey)!, keyId: keyId as string } : undefined,
    sealedRequest: d.request
      ? { ciphertext: plain(d.request.ciphertext)!, wrappedKey: plain(d.body?.wrappedKey ?? d.request.wrappedKey)!, keyId: keyId as string }
      : undefined,
    diagnosticJson: d.diagnosticJson,
    forwardedResponseJson: d.forwardedResponseJson,
    redactionsJson: (d.redactionsJson as string | undefined) ?? "",
    deliveries: deliveriesFromDoc(d),
    schemaDrift: Array.isArray(d.schemaDrift) ? (d.schemaDrift as EventRecord["schemaDrift"]) : undefined,
  };
}

/** One attempt as kept in its delivery's `attempts`. */
export function attemptToDoc(a: AttemptRecord): Record<string, unknown> {
  return {
    n: a.n,
    trigger: a.trigger,
    at: a.at,
    url: a.url,
    durationMs: a.durationMs,
    status: a.status,
    headers: a.headers.map(([n, v]) => [n, v]),
    ...(a.body ? { body: { ciphertext: bytes(a.body.ciphertext), wrappedKey: bytes(a.body.wrappedKey), keyId: a.body.keyId } } : {}),
    bodyTruncated: a.bodyTruncated,
    error: a.error,
    requestSha256: a.requestSha256,
    message: a.message,
  };
}

export function attemptFromDoc(d: AnyDoc | Record<string, any>): AttemptRecord {
  return {
    n: d.n,
    trigger: d.trigger,
    at: d.at,
    url: d.url,
    durationMs: d.durationMs,
    status: d.status,
    headers: (d.headers as [string, string][]).map(([n, v]) => [n, v] as HeaderPair),
    body: d.body ? { ciphertext: plain(d.body.ciphertext)!, wrappedKey: plain(d.body.wrappedKey)!, keyId: d.body.keyId } : undefined,
    bodyTruncated: d.bodyTruncated,
    error: d.error,
    // Absent on attempts recorded before they were kept.
    requestSha256: d.requestSha256 ?? "",
    message: d.message ?? "",
  };
}

/**
 * One delivery in the event's `deliveries`: {destinationId, state, target, nextAttemptAt,
 * claimOwner, claimUntil, started, attempts}. Unlike the event's own fields, the unset ones are
 * null, not absent: the outbox's pipeline updates clear them with a $cond, which can set null
 * but cannot portably remove a field (mingo keeps a field a $cond answers $$REMOVE for).
 */
export function deliveryToDoc(destinationId: string, p: DeliveryProgress, attempts: Record<string, unknown>[]): Record<string, unknown> {
  return {
    destinationId,
    state: p.state,
    target: p.target,
    nextAttemptAt: p.nextAttemptAt ?? null,
    claimOwner: p.claimOwner ?? null,
    claimUntil: p.claimUntil ?? null,
    started: p.started,
    spared: p.spared,
    attempts,
  };
}

/** A delivery of the document's `deliveries`; null is unset. */
export function deliveryFromDoc(f: Record<string, any> | undefined | null): DeliveryProgress {
  if (!f) return NEVER_FORWARDED;
  return {
    state: f.state ?? undefined,
    target: f.target ?? "",
    nextAttemptAt: f.nextAttemptAt ?? undefined,
    claimOwner: f.claimOwner ?? undefined,
    claimUntil: f.claimUntil ?? undefined,
    started: f.started ?? 0,
    spared: f.spared ?? 0,
  };
}

/** The delivery to one destination of an event's document, as stored (NEVER_FORWARDED when it has none). */
export function deliveryOfDoc(d: AnyDoc | Record<string, any>, destinationId: string): DeliveryProgress {
  return deliveryFromDoc(((d.deliveries ?? []) as Record<string, any>[]).find((x) => x.destinationId === destinationId));
}

/** An event's deliveries from its document, in their order; [] when never forwarded. */
export function deliveriesFromDoc(d: AnyDoc | Record<string, any>): DeliveryRecord[] {
  return ((d.deliveries ?? []) as Record<string, any>[]).flatMap((x) => {
    // Appended as recorded; a worker's late record can follow a later direct attempt.
    const attempts = ((x.attempts ?? []) as Record<string, any>[]).map(attemptFromDoc).sort((a, b) => a.n - b.n);
    const record = deliveryRecordOf(x.destinationId as string, deliveryFromDoc(x), attempts);
    return record ? [record] : [];
  });
}
