/** Domain records of the catalog. Times are milliseconds since the Unix epoch. */
import type { AlertChannelType, AlertState, AttemptTrigger, DeliveryState, SchemaDriftChangeJson } from "@whc/api-model";
import type { BreakerView } from "./breaker.js";

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  accountName: string;
  /** For people; "" on keys made before keys had names. */
  name: string;
  prefix: string;
  keyHash: Uint8Array;
  /** What the key may do (design §15); keys made before scopes read as ["*"]. */
  scopes: string[];
  /** The only endpoints the key sees; [] for every endpoint of its account. */
  endpointIds: string[];
  createdAt: number;
  expiresAt?: number | undefined;
  /** Moved at most once per interval (ADR 0051), never backwards. */
  lastUsedAt?: number | undefined;
  revokedAt?: number | undefined;
}

/** What listApiKeys selects: one account (by name or id), or every account. */
export interface ApiKeyFilter {
  accountName?: string | undefined;
  accountId?: string | undefined;
}

export interface EndpointRecord {
  id: string;
  accountId: string;
  slug: string;
  displayName: string;
  operatingMode: string;
  status: string;
  replayFromDashboard: boolean;
  replayFromApi: boolean;
  provider: string;
  sealedSecret?: Uint8Array | undefined;
  /** The secret before the last rotation; ingest still accepts it for a grace period. */
  sealedPreviousSecret?: Uint8Array | undefined;
  secretRotatedAt?: number | undefined;
  genericSignatureHeader: string;
  genericSignaturePrefix: string;
  source: string;
  createdAt: number;
  updatedAt: number;
  eventCount: number;
  lastEventAt?: number | undefined;
  lastPurgedAt?: number | undefined;
  purgedEventCount: number;
  /** What the receiving endpoint answers (the /v1 `response` object as JSON); "" for the default. */
  responseJson: string;
  /**
   * Answers taken from the response sequence since it was set or reset: the next capture
   * answered from it gets entry `sequenceCounter mod length`. Kept by the store (appends move
   * it), never shown outside the catalog.
   */
  sequenceCounter: number;
  /**
   * Where relay and proxy endpoints forward: the destinations as JSON (an array of
   * @whc/api-model storedDestination; before destinations, one destination's settings as an
   * object), no secrets; "" for none.
   */
  forwardJson: string;
  /** The target secret of an endpoint saved before destinations (its one destination's), sealed. */
  sealedTargetSecret?: Uint8Array | undefined;
  /** The destinations' target secrets, a JSON object {destination id: secret}, sealed; replay re-signs with them. */
  sealedDestinationSecrets?: Uint8Array | undefined;
  /** Inbound protection (the /v1 `inbound` object as JSON, without its secrets); "" for none. */
  inboundJson: string;
  /** The inbound protection with its password and token value (JSON), sealed; ingest checks with it. */
  sealedInbound?: Uint8Array | undefined;
  /** Requests refused by the inbound protection (design §16). */
  rejectedCount: number;
  /** What ingest replaces before storing a capture (the /v1 `redact` object as JSON); "" for nothing. */
  redactJson: string;
  /** Deduplication (the /v1 `dedupe` object as JSON, design §17); "" for none. */
  dedupeJson: string;
}

/** A page of an account's endpoints: ids strictly greater than `after` (any id, even a deleted one's). */
export interface EndpointPage {
  after?: string | undefined;
  limit: number;
}

/**
 * What createEndpoint takes: the record without what the store keeps or defaults. A new
 * endpoint starts its sequence at 0 and, without responseJson, answers the default.
 */
export type NewEndpoint = Omit<EndpointRecord, "responseJson" | "sequenceCounter" | "forwardJson" | "inboundJson" | "rejectedCount" | "redactJson" | "dedupeJson"> &
  Partial<Pick<EndpointRecord, "responseJson" | "sequenceCounter" | "forwardJson" | "inboundJson" | "rejectedCount" | "redactJson" | "dedupeJson">>;

/**
 * A change to an endpoint: each field present replaces the stored one, the others stay.
 * A new `sealedSecret` makes the current one the previous one and sets secretRotatedAt;
 * `clearSecret` removes the secret, the previous one and the rotation time (with a new
 * secret in the same patch: the new one is set, without a previous one). `responseJson: ""`
 * removes the response; `resetSequence` restarts the sequence at its first entry.
 */
export interface EndpointPatch {
  displayName?: string | undefined;
  status?: string | undefined;
  operatingMode?: string | undefined;
  replayFromDashboard?: boolean | undefined;
  replayFromApi?: boolean | undefined;
  provider?: string | undefined;
  genericSignatureHeader?: string | undefined;
  genericSignaturePrefix?: string | undefined;
  sealedSecret?: Uint8Array | undefined;
  clearSecret?: boolean | undefined;
  responseJson?: string | undefined;
  resetSequence?: boolean | undefined;
  /** `""` removes the destinations and every target secret. */
  forwardJson?: string | undefined;
  sealedTargetSecret?: Uint8Array | undefined;
  clearTargetSecret?: boolean | undefined;
  /** Replaces the destinations' sealed secrets; empty removes them. */
  sealedDestinationSecrets?: Uint8Array | undefined;
  /** With `sealedInbound`, replaces the inbound protection; `""` removes it and its secrets. */
  inboundJson?: string | undefined;
  sealedInbound?: Uint8Array | undefined;
  /** `""` removes the redaction settings. */
  redactJson?: string | undefined;
  /** `""` removes the deduplication settings (the keys seen stay until their window ends). */
  dedupeJson?: string | undefined;
}

export interface SealedBody {
  ciphertext: Uint8Array;
  wrappedKey: Uint8Array;
  keyId: string;
}

export type HeaderPair = readonly [name: string, value: string];

/** What ingest hands over; the catalog assigns id and receivedAt at commit. */
export interface NewEvent {
  accountId: string;
  endpointId: string;
  method: string;
  /** In clear only on events captured before sealedRequest (ADR 0009); "" beside it. */
  path: string;
  /** In clear only on events captured before sealedRequest (ADR 0009); [] beside it. */
  headers: HeaderPair[];
  /**
   * The request's headers, sub-path and query, packed and sealed under the body's data key
   * (the same wrappedKey and keyId as `body`, stored once); present even without a body.
   */
  sealedRequest?: SealedBody | undefined;
  remoteIp: string;
  canonicalEventType: string;
  provider: string;
  verification: string;
  verificationFailureReason: string;
  responseCode: number;
  truncated: boolean;
  originalSizeBytes: number;
  /** Absent: only metadata was stored. */
  body?: SealedBody | undefined;
  /**
   * The body's blind-index tokens, TOKEN_BYTES each, concatenated (packSearchTokens): packed
   * by ingest once and split by the store only where it needs them one by one.
   */
  searchTokens: Uint8Array;
  diagnosticJson: string;
  forwardedResponseJson: string;
  /**
   * Present and non-empty when the endpoint answers this capture from its response sequence:
   * the statuses of the sequence's entries. The store takes the endpoint's sequenceCounter n
   * inside the append's transaction, stores `statuses[n mod length]` as responseCode and
   * moves the counter to n + 1. Not stored. Absent or empty: responseCode is kept as given.
   */
  sequenceStatuses?: readonly number[] | undefined;
  /**
   * Present for a relay or proxy endpoint's capture: its deliveries, one per destination whose
   * filter it matched (design §17), each starting `pending` towards its target. With
   * `scheduled` (relay) they enter the outbox in the append's transaction, due at its
   * receivedAt; without (proxy) the one delivery waits for ingest's own attempt.
   */
  forward?: { scheduled: boolean; deliveries: NewDelivery[] } | undefined;
  /** How many values ingest replaced before storing (the /v1 `redactions` as JSON); "" or absent: none. */
  redactionsJson?: string | undefined;
  /**
   * Present when the endpoint deduplicates and the capture has a key (design §17, ADR 0083):
   * the key's keyed hash (never the key). The store looks it up among the endpoint's keys in
   * the append's transaction (dedupeDecision): kept and unexpired at the event's receivedAt,
   * the event is stored with duplicateOf its first event and its deliveries `duplicate`; else
   * the key is kept for this event until receivedAt + windowMs. Not stored with the event.
   */
  dedupe?: NewDedupe | undefined;
}

/** A capture's deduplication key, hashed, and how long a first capture's key holds. */
export interface NewDedupe {
  keyHash: Uint8Array;
  windowMs: number;
}

/**
 * A deduplication key an endpoint has seen (ADR 0083): its keyed hash, the first event that
 * had it, and when it stops making duplicates. Kept by the store apart from the events (a
 * deleted first event leaves it), removed with its endpoint or, once expired, by the purge.
 */
export interface DedupeKeyRecord {
  endpointId: string;
  keyHash: Uint8Array;
  firstEventId: string;
  expiresAt: number;
}

/** A delivery a capture starts: its destination, and where the capture goes (sealed text). */
export interface NewDelivery {
  destinationId: string;
  target: string;
}

/** One request to the destination and what it answered. */
export interface AttemptRecord {
  n: number;
  trigger: AttemptTrigger;
  at: number;
  url: string;
  durationMs: number;
  /** 0 when there was no answer (`error` says why). */
  status: number;
  headers: HeaderPair[];
  /** The answer's first bytes (up to 64 KiB), sealed; absent when empty. */
  body?: SealedBody | undefined;
  bodyTruncated: boolean;
  /** "" or a network failure reason, `target_not_allowed`, `egress_capacity_exhausted`, `interrupted`, `transform_failed`. */
  error: string;
  /** Hex SHA-256 of the body sent; "" when nothing was sent (or by a version before it was recorded). */
  requestSha256: string;
  /** Words for what went wrong (a transform's exception); "" otherwise. */
  message: string;
}

/** One of an event's deliveries (design §17): to one destination, with its own state and attempts. */
export interface DeliveryRecord {
  destinationId: string;
  state: DeliveryState;
  target: string;
  /** Set while the delivery waits in the outbox. */
  nextAttemptAt?: number | undefined;
  /** Oldest first. */
  attempts: AttemptRecord[];
}

export interface EventRecord extends Omit<NewEvent, "searchTokens" | "sequenceStatuses" | "forward" | "dedupe"> {
  id: string;
  receivedAt: number;
  readAt?: number | undefined;
  /** The first event with the same deduplication key within its window (design §17); absent: not a duplicate. */
  duplicateOf?: string | undefined;
  /** Its deliveries in the order they were made (destinations' order at capture); [] when never forwarded. */
  deliveries: DeliveryRecord[];
  /**
   * How its JSON body departs from what its endpoint learned of its event type (design §19),
   * written after the commit by learnSchemas; absent when it does not, or was not judged.
   */
  schemaDrift?: SchemaDriftChangeJson[] | undefined;
}

/** The list view leaves out the heavy parts (and the deliveries, but for their aggregate state). */
export type EventSummaryRecord = Omit<EventRecord, "headers" | "body" | "sealedRequest" | "diagnosticJson" | "forwardedResponseJson" | "deliveries" | "redactionsJson" | "schemaDrift"> & {
  bodyStored: boolean;
  keyId?: string | undefined;
  forwardState?: DeliveryState | undefined;
};

/** A due delivery taken from the outbox: the claim may send attempt `attempt`. */
export interface DeliveryClaim {
  accountId: string;
  endpointId: string;
  eventId: string;
  destinationId: string;
  attempt: number;
  /** Present on a delivery a bulk redelivery job put back in the outbox (ADR 0089): the job. */
  bulkJobId?: string;
  /** With bulkJobId: attempts made before the job put it back; its attempt budget counts from there. */
  attemptBase?: number;
  /**
   * The attempt as counted against maxAttempts when earlier attempts ended held (design §18:
   * held never consumes attempts); absent: `attempt`.
   */
  counted?: number | undefined;
  /** A rate-limited destination's delivery: sent this long after the claim's time, PACED_SEND_DELAY_MS after its turn (sendAfterMsOf). */
  sendAfterMs?: number | undefined;
}

/** A claim's deliveries, and how many due deliveries it moved to their rate limit's turn (limiter waits). */
export interface ClaimOutcome {
  claims: DeliveryClaim[];
  limiterWaits: number;
}

/** A breaker that opened or closed with the attempt just recorded (destination.opened, destination.closed). */
export interface BreakerNotice {
  change: "opened" | "closed";
  name: string;
  breaker: BreakerView;
}

/** What recording an attempt leaves: the delivery, and the event's aggregate state (design §17). */
export interface RecordedAttempt {
  delivery: DeliveryRecord;
  forwardState: DeliveryState;
  /** The attempt opened or closed its destination's breaker. */
  breaker?: BreakerNotice | undefined;
}

export interface OutboxStats {
  pending: number;
  /** Due time of the oldest pending delivery in the outbox. */
  oldestDueAt?: number | undefined;
}

export interface Cursor {
  receivedAt: number;
  id: string;
}

/**
 * A running `whc listen` (design §19; ADR 0062): saved at each heartbeat, gone once expiresAt
 * passes without another. The lag run is how the catalog tells a listener that falls behind
 * (listener.stalled) from one that keeps up: it starts again whenever the lag falls or is 0.
 */
export interface ListenerRecord {
  /** Chosen by the listener; unique within its endpoint. */
  id: string;
  accountId: string;
  endpointId: string;
  host: string;
  startedAt: number;
  lastSeenAt: number;
  expiresAt: number;
  /** The last event the listener is past; undefined before its first. */
  cursor?: Cursor | undefined;
  /** The endpoint's events after the cursor at lastSeenAt, counted up to a bound. */
  lagEvents: number;
  /** Since when the listener has been behind at every heartbeat without its lag ever falling. */
  lagRunSince: number;
  lastError?: string | undefined;
}

export interface EventQuery {
  accountId: string;
  endpointId: string;
  before?: Cursor | undefined;
  after?: Cursor | undefined;
  fromMs?: number | undefined;
  toMs?: number | undefined;
  eventType?: string | undefined;
  provider?: string | undefined;
  responseCode?: number | undefined;
  verification?: string | undefined;
  /** An aggregate DeliveryState, or "none" for events never forwarded. */
  forwardState?: string | undefined;
  /** Only events with a delivery to this destination. */
  destinationId?: string | undefined;
  /** Present (even empty) when the caller searched: metadata-only events are left out. */
  searchTokens?: Uint8Array[] | undefined;
  /** true: only events with schemaDrift; false: only events without. */
  schemaDrift?: boolean | undefined;
  /** true: only duplicates (duplicateOf set); false: only the others. */
  duplicate?: boolean | undefined;
  limit: number;
}

export interface EventPage {
  /** Newest first. */
  events: EventSummaryRecord[];
  /** Events older than the last returned one also match. */
  hasOlder: boolean;
  searchExcludedMetadataOnlyCount: number;
}

export interface ReplayCharge {
  allowed: boolean;
  used: number;
}

export interface ReplayAuditRecord {
  id: string;
  accountId: string;
  endpointId: string;
  eventId: string;
  keyId: string;
  targetUrl: string;
  mode: string;
  result: string;
  targetStatus: number;
  networkFailureReason: string;
  durationMs: number;
  createdAt: number;
  requestId: string;
  client: string;
}

/** An event's id and time, given at commit from its endpoint's last stamp (nextStamp, ADR 0008). */
export interface Stamp {
  id: string;
  receivedAt: number;
}

/** One stored event of an append: its stamp and what was stored as its response code. */
export interface AppendResult extends Stamp {
  responseCode: number;
  /** The sequence position the event took; only when it was appended with sequenceStatuses. */
  sequenceIndex?: number | undefined;
  /** Stored as a duplicate of this event (design §17); absent: not a duplicate. */
  duplicateOf?: string | undefined;
}

/** One entry of the audit log (design §15; ADR 0053). */
export interface AuditRecord {
  id: string;
  accountId: string;
  at: number;
  action: string;
  keyId: string;
  keyPrefix: string;
  remoteIp: string;
  requestId: string;
  endpointId?: string | undefined;
  eventId?: string | undefined;
  /** Never a body or a secret. */
  details: Record<string, unknown>;
}

/** A position in the log: newest first by (at, id). */
export interface AuditCursor {
  at: number;
  id: string;
}

export interface AuditQuery {
  accountId: string;
  before?: AuditCursor | undefined;
  after?: AuditCursor | undefined;
  fromMs?: number | undefined;
  toMs?: number | undefined;
  action?: string | undefined;
  keyId?: string | undefined;
  endpointId?: string | undefined;
  /** Only entries about this event: its history (reads, replays, redeliveries, exports). */
  eventId?: string | undefined;
  limit: number;
}

export interface AuditPage {
  /** Newest first. */
  entries: AuditRecord[];
  /** Entries older than the last returned one also match. */
  hasOlder: boolean;
}

/**
 * An alert channel of an account (design §18; ADR 0086): told about the alert types it names,
 * for every endpoint or only its `endpointIds`.
 */
export interface AlertChannelRecord {
  id: string;
  accountId: string;
  /** Unique within the account. */
  name: string;
  type: AlertChannelType;
  url: string;
  events: string[];
  /** The only endpoints whose alerts it gets; [] for every endpoint of its account. */
  endpointIds: string[];
  /** A webhook channel's signing secret (`whsec_...`), sealed; absent on a slack channel. */
  sealedSecret?: Uint8Array | undefined;
  createdAt: number;
  /** The last alert sent to it, as its last recorded attempt left it; kept by the store. */
  lastDelivery?: AlertDeliveryNote | undefined;
}

/** Where the last alert of a channel stands. */
export interface AlertDeliveryNote {
  alertId: string;
  type: string;
  at: number;
  state: AlertState;
  attempts: number;
  /** 0 when there was no answer. */
  status: number;
  /** "" for an answer, else why there was none. */
  error: string;
}

/** One occurrence of something a channel may be told about (the one way in: raiseAlerts). */
export interface RaisedAlert {
  accountId: string;
  type: string;
  /** The endpoint it is about; absent when it concerns none. */
  endpointId?: string | undefined;
  /** What happened (an event id, a failure reason, a listener...): never a body or a secret. */
  data: Record<string, unknown>;
  /** Only this channel, whatever it names (a test); absent: every channel that names the type and sees the endpoint. */
  channelId?: string | undefined;
}

/**
 * An alert in the alert outbox (ADR 0085): one per channel and occurrence, or for several
 * occurrences of one type about one endpoint coalesced into it while it had not been tried
 * (`count`). Due at `nextAttemptAt` while pending; claims and attempts work as a relay
 * delivery's (`started`: attempt numbers given out).
 */
export interface AlertRecord {
  id: string;
  accountId: string;
  channelId: string;
  type: string;
  /** "" when it concerns no endpoint. */
  endpointId: string;
  /** The endpoint's slug when it was raised, for people ("" when none). */
  endpointSlug: string;
  /** The last occurrence's data, as JSON. */
  dataJson: string;
  count: number;
  firstAt: number;
  lastAt: number;
  /** When it was first due: the start of its coalescing window. */
  dueAt: number;
  state: AlertState;
  nextAttemptAt?: number | undefined;
  claimOwner?: string | undefined;
  claimUntil?: number | undefined;
  started: number;
  lastAttemptAt?: number | undefined;
  lastStatus: number;
  lastError: string;
}

/** A due alert handed to one worker with its channel (sealed secret included) and the attempt number it may send. */
export interface AlertClaim {
  alert: AlertRecord;
  channel: AlertChannelRecord;
  attempt: number;
}

/** What an alert's attempt came to, and the worker's verdict. */
export interface AlertAttemptResult {
  at: number;
  status: number;
  error: string;
  state: AlertState;
  /** With `pending`: when it is due again. */
  nextAttemptAt?: number | undefined;
}

/** One path of a learned schema (design §19): the types met there (a JSON_TYPES mask) and in how many samples it was present. */
export interface SchemaPathRecord {
  path: string;
  mask: number;
  present: number;
}

/**
 * What the catalog learned of one endpoint's captures of one event type (design §19; ADR
 * 0090): no value, only paths, their types and how often they were there.
 */
export interface SchemaRecord {
  accountId: string;
  endpointId: string;
  /** canonicalEventType, or `*` (ANY_EVENT_TYPE) for captures without one. */
  eventType: string;
  samples: number;
  firstSeenAt: number;
  lastSeenAt: number;
  /** In the order first seen, at most SCHEMA_LIMITS.pathsPerType. */
  paths: SchemaPathRecord[];
  /** When schema.drift was last raised for this type, and the drifted captures since. */
  driftNoticeAt?: number | undefined;
  driftsSinceNotice: number;
}

/** A stored capture with a JSON body's shape, to learn from after its commit (ADR 0090). */
export interface SchemaObservation {
  accountId: string;
  endpointId: string;
  /** canonicalEventType, or `*`. */
  eventType: string;
  eventId: string;
  receivedAt: number;
  /** CapturedEvent.body_shape: encodeBodyShape's text, never "". */
  shape: string;
}

/**
 * A drifted capture that raises schema.drift (design §19): at most one per endpoint and event
 * type per interval, with how many captures of the type drifted since the last one.
 */
export interface SchemaDriftNotice {
  accountId: string;
  endpointId: string;
  eventType: string;
  eventId: string;
  changes: SchemaDriftChangeJson[];
  count: number;
}

/** Which events a bulk redelivery takes (design §18; ADR 0089): EventQuery's filters, search excepted. */
export type RedeliveryFilter = Pick<
  EventQuery,
  "fromMs" | "toMs" | "eventType" | "provider" | "responseCode" | "verification" | "forwardState" | "destinationId" | "schemaDrift"
>;

export type RedeliveryJobState = "running" | "done" | "failed" | "canceled";

/**
 * A bulk redelivery job (ADR 0089). Its walk goes oldest first through the endpoint's events
 * up to `until` (its newest event when the job started); `cursor` is the last event walked,
 * moved in the transaction that puts that page's deliveries back in the outbox. A lease
 * (leaseOwner, leaseUntil) gives the walk to one replay runner at a time.
 */
export interface RedeliveryJobRecord {
  id: string;
  accountId: string;
  endpointId: string;
  filter: RedeliveryFilter;
  state: RedeliveryJobState;
  /** Counted when the job started; set to `queued` once the walk is done (or stopped). */
  total: number;
  /** Deliveries put back in the outbox so far. */
  queued: number;
  /** Of those, ended delivered or skipped. */
  done: number;
  /** Of those, ended failed or exhausted. */
  failed: number;
  /** Every event up to `until` was walked. */
  walked: boolean;
  cursor: Cursor | undefined;
  /** Undefined: the endpoint had no event when the job started (nothing to walk). */
  until: Cursor | undefined;
  createdAt: number;
  updatedAt: number;
  finishedAt: number | undefined;
  createdByKeyId: string;
  createdByKeyPrefix: string;
  leaseOwner: string | undefined;
  /** Until when the lease holds; a job released for later is claimable again from then. */
  leaseUntil: number | undefined;
}

/** What a job is started with; the store counts it and sets the rest. */
export type NewRedeliveryJob = Pick<RedeliveryJobRecord, "id" | "accountId" | "endpointId" | "filter" | "createdAt" | "createdByKeyId" | "createdByKeyPrefix">;

export interface RedeliveryLimits {
  /** Running jobs one account may have (quota redelivery_jobs). */
  runningPerAccount: number;
  /** Deliveries one job may redo (quota redelivery_deliveries). */
  deliveriesPerJob: number;
}
