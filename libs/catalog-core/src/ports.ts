import type { NewRedeliveryJob, RedeliveryFilter, RedeliveryJobRecord, RedeliveryLimits } from "./types.js";
import type { BreakerView } from "./breaker.js";
import type { ClaimOutcome, AlertAttemptResult, AlertChannelRecord, AlertClaim, RaisedAlert, ApiKeyFilter, ApiKeyRecord, AuditPage, AuditQuery, AuditRecord, AppendResult, Cursor, EndpointPatch, EndpointPage, EndpointRecord, EventPage, EventQuery, EventRecord, ListenerRecord, NewEndpoint, NewEvent, ReplayAuditRecord, ReplayCharge, AttemptRecord, OutboxStats, RecordedAttempt, SchemaDriftNotice, SchemaObservation, SchemaRecord } from "./types.js";
import type { Clock } from "./ids.js";
import type { AttemptTransition, DeliveryRef, EventRef } from "@whc/ports";

/**
 * The catalog's storage port. Every adapter (embedded SQLite, MongoDB) passes the same
 * contract suite. Adapters translate driver failures into AppError reasons:
 * `slug_taken` for a duplicate slug, `service_unavailable` when the store cannot answer.
 *
 * A method taking an `audit` entry writes it with the action it records, only when the action
 * took place (ADR 0053): in the action's transaction (SQLite; MongoDB where the server runs
 * transactions), else right after it, before the method answers, so that no caller is told of
 * an action whose entry failed.
 */
export interface CatalogStore {
  readonly kind: string;

  /**
   * Registers the hash as a key of the account named (created if new) with every scope
   * (`*`), idempotently: the same hash again answers the stored key, `created` false.
   */
  ensureApiKey(accountName: string, keyHash: Uint8Array, prefix: string, now: number, name?: string): Promise<{ key: ApiKeyRecord; created: boolean }>;
  /**
   * Registers a key of an existing account as given (its accountName is the store's);
   * `not_found` when the account does not exist, `conflict` when the hash is registered.
   * With `quota`: throws `quota_exceeded` (keyQuotaExceeded) when the account already has
   * `quota` usable keys (not revoked, not expired at the key's createdAt), decided in the
   * insert's transaction as the endpoint quota is (ADR 0036, ADR 0054).
   */
  createApiKey(key: Omit<ApiKeyRecord, "accountName">, audit?: AuditRecord, quota?: number): Promise<ApiKeyRecord>;
  findApiKeyByHash(keyHash: Uint8Array): Promise<ApiKeyRecord | undefined>;
  /** By createdAt, then id. */
  listApiKeys(filter?: ApiKeyFilter): Promise<ApiKeyRecord[]>;
  /**
   * Sets revokedAt once (a second revoke keeps the first time); with accountId, only a key of
   * that account. Undefined when there is no such key.
   */
  revokeApiKey(keyId: string, now: number, accountId?: string, audit?: AuditRecord): Promise<ApiKeyRecord | undefined>;
  /** Sets lastUsedAt to `at` unless it is already after `notBefore` (ADR 0051). */
  touchApiKey(keyId: string, at: number, notBefore: number): Promise<void>;
  countActiveApiKeys(): Promise<number>;
  /**
   * Deletes every key revoked before `before` or expired before it (ADR 0054), of every
   * account; never a key without revokedAt and expiresAt. Answers how many.
   */
  purgeApiKeys(before: number): Promise<number>;

  /**
   * Throws AppError `slug_taken` when the account already has the slug. With `quota`: throws
   * `quota_exceeded` (endpointQuotaExceeded) when the account already has `quota` endpoints,
   * decided in the insert's transaction so that concurrent creates, from any number of
   * catalog processes, never leave it with more (ADR 0036).
   */
  createEndpoint(endpoint: NewEndpoint, quota?: number, audit?: AuditRecord): Promise<EndpointRecord>;
  /** Without accountId: an internal lookup by id alone. */
  getEndpoint(endpointId: string, accountId?: string): Promise<EndpointRecord | undefined>;
  /**
   * The account's endpoints by id ascending (ids are UUIDv7: creation order); with `page`, at
   * most `page.limit` of them with ids greater than `page.after`, at a cost that grows with
   * the limit, not with the account's number of endpoints (an index on account and id).
   */
  listEndpoints(accountId: string, page?: EndpointPage): Promise<EndpointRecord[]>;
  /** Removes the endpoint, its events, its schemas, its deduplication keys and its redelivery jobs; false when it was not there. */
  deleteEndpoint(accountId: string, endpointId: string, audit?: AuditRecord): Promise<boolean>;
  /**
   * Applies the patch (EndpointPatch says how) atomically and sets updatedAt = now; undefined
   * when the endpoint does not exist or belongs to another account (then nothing changes).
   */
  updateEndpoint(accountId: string, endpointId: string, patch: EndpointPatch, now: number, audit?: AuditRecord): Promise<EndpointRecord | undefined>;

  /**
   * Stores the batch atomically and durably, stamping each event inside the append's
   * transaction from its endpoint's last stamp (`nextStamp` with a `clock` reading, once per
   * event, in order) and moving that last stamp in the same transaction, so that per endpoint
   * commit order equals (receivedAt, id) order however many catalog processes append at once
   * (ADR 0008).
   * One result per event, in order: its stamp and stored response code, or undefined when its
   * endpoint no longer exists and nothing was stored for it. An event with sequenceStatuses
   * takes its endpoint's sequence counter in the same transaction (NewEvent says how), so
   * concurrent appends and restarts continue one sequence and each index is given out once.
   */
  appendEvents(events: NewEvent[], clock: Clock): Promise<(AppendResult | undefined)[]>;
  listEvents(query: EventQuery): Promise<EventPage>;
  /** With markReadAt: sets readAt if it was not set yet and returns the updated record. */
  getEvent(accountId: string, endpointId: string, eventId: string, markReadAt?: number, audit?: AuditRecord): Promise<EventRecord | undefined>;
  deleteEvent(accountId: string, endpointId: string, eventId: string, audit?: AuditRecord): Promise<boolean>;

  /** Atomically takes one unit of the day's allowance if fewer than `limit` were used. */
  chargeReplay(accountId: string, day: string, limit: number): Promise<ReplayCharge>;
  getReplayUsage(accountId: string, day: string): Promise<number>;
  recordReplayAudit(audit: ReplayAuditRecord, entry?: AuditRecord): Promise<void>;

  /** The audit log: one entry written by itself (an action of several calls, or made elsewhere). */
  recordAudit(entry: AuditRecord): Promise<void>;
  /** Newest first by (at, id), cursors and filters as events' (design §3). */
  listAudit(query: AuditQuery): Promise<AuditPage>;
  /** Deletes entries older than `before`; answers how many. */
  purgeAudit(before: number): Promise<number>;

  /**
   * Deletes events received before `before`; updates purgedEventCount and lastPurgedAt. Also
   * deletes the deduplication keys whose window ended by `now` (ADR 0083).
   */
  purgeEvents(before: number, now: number): Promise<number>;
  /** The deduplication keys an endpoint holds, expired ones not yet purged included (ADR 0083). */
  countDedupeKeys(endpointId: string): Promise<number>;

  /**
   * The relay outbox: atomically claims up to `limit` deliveries that are pending and due
   * (nextAttemptAt <= now) and not claimed by anyone until now. Each claim takes the
   * delivery's next attempt number (numbers are never given out twice, whatever crashes) and
   * hides the delivery from other claims until now + claimMs or until its attempt is recorded.
   * An event's deliveries (one per destination, design §17) are claimed each on its own.
   * Oldest claimable first. A delivery a bulk redelivery job put back answers the job and its
   * attempt base (bulkJobId, attemptBase).
   *
   * Delivery control (design §18, ADRs 0087, 0088), decided in the same atomic step for every
   * delivery whose destination its endpoint still has (gateOf): a destination that holds (its
   * breaker open, or half-open for another delivery, or paused) has its due deliveries held;
   * one at its concurrency is skipped; one whose rate limit's turn is later has them moved to
   * their turns (waitingTurn, at most MAX_WAITS_PER_CLAIM a claim, counted in limiterWaits); otherwise the claim takes the turn
   * (takeTurn). An open breaker whose probe is due (probeDue) has its oldest held delivery
   * claimed as the probe (probedDelivery; half-open), one across all claims. A destination whose
   * deliveries are held and that no longer holds (closed and not paused, or gone) has them
   * released (settleDestinations' rule).
   */
  claimDeliveries(owner: string, now: number, claimMs: number, limit: number): Promise<ClaimOutcome>;
  /**
   * Takes the next attempt number of a delivery for an attempt made outside the outbox
   * (proxy, manual, cli); when the event has no delivery to that destination yet, creates one:
   * state `pending` (in flight, not in the outbox), towards `target`. Undefined when the event
   * does not exist.
   */
  beginForwardAttempt(ref: DeliveryRef, target: string): Promise<number | undefined>;
  /**
   * Appends the attempt to the delivery (created as begun when the event has none to that
   * destination) and applies the transition; answers the delivery after it and the event's
   * aggregate state, undefined when the event does not exist. When the delivery was put back by
   * a bulk redelivery job and this attempt ends it (endedOutcome), the job counts it
   * (jobAfterEnded), in the same transaction where the store has one (ADR 0089).
   *
   * An outbox attempt whose claim held, of a destination its endpoint has, also moves that
   * destination's breaker (recordedBreaker), in the same atomic step: the verdict becomes
   * `held` while it holds (heldTransition); opening holds its other waiting deliveries;
   * closing (when not paused) starts the drain: the oldest held delivery let go (drainTurn), the
   * next once it settles (drainsNext), deliveries arriving meanwhile held behind them. `breaker` says when it
   * opened or closed. `now` (the catalog's clock; default the store's) times its changes.
   */
  recordForwardAttempt(ref: DeliveryRef, attempt: AttemptRecord, transition: AttemptTransition, audit?: AuditRecord, now?: number): Promise<RecordedAttempt | undefined>;
  /**
   * The earliest time later than `after` at which a delivery waiting in the outbox can be
   * claimed (its due time, or its claim's end when that is later: claimableAt): when a worker
   * that claimed everything due at `after` should look again. Undefined when none.
   */
  nextDueAt(after: number): Promise<number | undefined>;
  outboxStats(): Promise<OutboxStats>;
  /**
   * The stored breakers of the endpoints' destinations, each with its held deliveries counted
   * (a destination without one is closed and holds nothing).
   */
  destinationBreakers(endpointIds: readonly string[]): Promise<BreakerView[]>;
  /**
   * Brings the endpoint's deliveries in line with its destinations' controls now (after an
   * update): a paused destination's waiting deliveries are held; a destination that no longer
   * holds (closed and not paused) has its held ones released, oldest first, paced
   * one at a time (drainTurn); the breakers of destinations the endpoint no longer has are removed, their
   * held deliveries released (they then fail as not configured).
   */
  settleDestinations(endpointId: string, now: number): Promise<void>;
  /** Breakers not closed, or holding deliveries, with their held counts: the replay metrics' gauges. */
  activeBreakers(): Promise<BreakerView[]>;
  /**
   * A proxied capture's answer, known after its commit: stores `responseCode` and, when the
   * forward failed, makes its diagnostic's responseSource `forward_failed`. False when the
   * event does not exist.
   */
  recordProxyAnswer(ref: EventRef, responseCode: number, forwardFailed: boolean): Promise<boolean>;
  /** Adds each count to its endpoint's rejectedCount (inbound protection, design §16); unknown endpoints are skipped. */
  countRejections(counts: readonly { endpointId: string; count: number }[]): Promise<void>;

  /**
   * The endpoint's events strictly after `after` in (receivedAt, id) order, counted up to
   * `limit`: a listener's lag, at a cost bounded by the limit.
   */
  countEventsAfter(accountId: string, endpointId: string, after: Cursor, limit: number): Promise<number>;
  /**
   * Saves the listener (inserted, or replacing the one with its endpoint and id), first
   * forgetting every listener of any endpoint whose expiresAt is at or before `now`. False,
   * and nothing saved, when it is new and its endpoint already has `maxPerEndpoint` live
   * listeners: decided in the save's transaction.
   */
  putListener(listener: ListenerRecord, maxPerEndpoint: number, now: number): Promise<boolean>;
  /** The endpoint's listeners whose expiresAt is after `now`, by startedAt then id. */
  listListeners(accountId: string, endpointId: string, now: number): Promise<ListenerRecord[]>;
  /** False when the endpoint had no listener with that id. */
  deleteListener(accountId: string, endpointId: string, listenerId: string): Promise<boolean>;

  /**
   * Alert channels (design §18; ADR 0086). Throws `quota_exceeded` (alertChannelQuotaExceeded)
   * when the account already has `maxPerAccount` channels and `conflict` on `name`
   * (alertChannelNameTaken) when it has one of that name: decided in the insert's transaction.
   */
  createAlertChannel(channel: AlertChannelRecord, maxPerAccount: number, audit?: AuditRecord): Promise<AlertChannelRecord>;
  /** The account's channels by createdAt, then id, sealed secrets included. */
  listAlertChannels(accountId: string): Promise<AlertChannelRecord[]>;
  /** Removes the channel and every alert of it, sent or not; false when it was not there. */
  deleteAlertChannel(accountId: string, channelId: string, audit?: AuditRecord): Promise<boolean>;
  /**
   * The alert outbox (ADR 0085): for each occurrence, every channel that wants it (channelWants)
   * gets it as raisedInto says (counted into the open alert of its key, or a new one due at
   * once or when the key's window ends), in one transaction per call; the endpoint's slug is
   * read when a channel wants it. Answers the ids of the alerts that now carry the occurrences
   * (none: no channel wanted any).
   */
  raiseAlerts(raised: readonly RaisedAlert[], now: number, windowMs: number): Promise<string[]>;
  /** As claimDeliveries, for alerts (isClaimableAlert, claimedAlert), each with its channel. Oldest due first. */
  claimAlerts(owner: string, now: number, claimMs: number, limit: number): Promise<AlertClaim[]>;
  /**
   * Records attempt n's result (recordedAlert) and the channel's lastDelivery, only while the
   * claim (owner, n) holds; false when it does not, or the alert is gone.
   */
  recordAlertAttempt(alertId: string, owner: string, n: number, result: AlertAttemptResult): Promise<boolean>;
  /** The earliest due time later than `after` of a pending alert: when a worker should look again. */
  nextAlertDueAt(after: number): Promise<number | undefined>;
  /** Deletes alerts no longer pending whose window started before `before`; answers how many. */
  purgeAlerts(before: number): Promise<number>;
  /**
   * Schemas and drift (design §19; ADR 0090): learns each observation after its capture's
   * commit, judging it against its endpoint's schema of its event type as learned so far and
   * then adding it (learnGroup), with every schema's read and write atomic against other
   * catalog processes' (a transaction, or a versioned replace retried), so that each
   * observation is judged and counted once. A drifted capture gets its schemaDrift. An
   * observation whose endpoint is gone, or whose event type is new to an endpoint that already
   * has SCHEMA_LIMITS.typesPerEndpoint schemas, is skipped. Answers the schema.drift notices
   * due, in order.
   */
  learnSchemas(observations: readonly SchemaObservation[], noticeIntervalMs: number): Promise<SchemaDriftNotice[]>;
  /** The endpoint's schemas by event type; [] when there are none (or the endpoint is another account's). */
  listSchemas(accountId: string, endpointId: string): Promise<SchemaRecord[]>;
  getSchema(accountId: string, endpointId: string, eventType: string): Promise<SchemaRecord | undefined>;

  /**
   * Bulk redelivery (design §18; ADR 0089). How many deliveries a job with this filter would
   * redo now: of the endpoint's events the filter takes (listEvents' filters), each delivery
   * to one of redeliveryDestinations whose state a job redoes (redoes). `forward_not_configured`
   * when the endpoint has none of those destinations; `not_found` when it is not the account's.
   */
  countRedeliveries(accountId: string, endpointId: string, filter: RedeliveryFilter): Promise<number>;
  /**
   * Starts a job (newRedeliveryJob) in one transaction: `quota_exceeded`
   * (redeliveryJobsExceeded) when the account already runs limits.runningPerAccount jobs, or
   * (redeliveryTooLarge) when the count, as countRedeliveries makes it up to the endpoint's
   * newest event (the walk's end, `until`), passes limits.deliveriesPerJob. The audit entry is
   * written with `total` and `jobId` added to its details. Errors as countRedeliveries'.
   */
  createRedeliveryJob(job: NewRedeliveryJob, limits: RedeliveryLimits, audit?: AuditRecord): Promise<RedeliveryJobRecord>;
  getRedeliveryJob(accountId: string, endpointId: string, jobId: string): Promise<RedeliveryJobRecord | undefined>;
  /** The endpoint's jobs, newest first (createdAt, then id), at most `limit`. */
  listRedeliveryJobs(accountId: string, endpointId: string, limit: number): Promise<RedeliveryJobRecord[]>;
  /** canceledJob; the audit entry (with `queued`) only when it was running. Undefined when there is no such job. */
  cancelRedeliveryJob(accountId: string, endpointId: string, jobId: string, now: number, audit?: AuditRecord): Promise<RedeliveryJobRecord | undefined>;
  /** Leases the claimable job (isClaimableJob) whose lease ended first (never-leased first), then oldest, to `owner` (claimedJob). */
  claimRedeliveryJob(owner: string, now: number, leaseMs: number): Promise<RedeliveryJobRecord | undefined>;
  /**
   * While `owner` holds the job's lease (jobLeaseHolds), in one transaction: when it is running
   * and not walked and `limit` > 0, the next `limit` events after its cursor, up to its `until`,
   * that have a delivery it redoes get those deliveries requeued (requeuedDelivery, due `now`,
   * tagged with the job and with their attempt count as base), their aggregate state moved, and
   * the job paged (pagedJob); an endpoint that lost the destinations fails it (failedJob). A
   * walked running job is settled (settledJob) with the number of its tagged deliveries still
   * open. The lease is renewed to now + leaseMs. Undefined when the job is gone or the lease is
   * another's; else the job as it now stands.
   */
  runRedeliveryPage(jobId: string, owner: string, now: number, limit: number, leaseMs: number): Promise<RedeliveryJobRecord | undefined>;
  /** releasedJob at `at`, while `owner` holds the lease; false otherwise. */
  releaseRedeliveryJob(jobId: string, owner: string, at: number): Promise<boolean>;
  /** Deletes jobs that finished before `before`; answers how many. */
  purgeRedeliveryJobs(before: number): Promise<number>;

  ping(): Promise<boolean>;
  close(): Promise<void>;
}
