import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  type CatalogService,
  type CapturedEvent,
  AuthenticateApiKeyResponseSchema,
  CapturedEventsFormatError,
  encodeAppendedEvents,
  decodeCapturedEvents,
  type Endpoint,
  type ReplayAudit,
} from "@whc/contracts";
import { AppError, notFound, validationFailed } from "@whc/errors";
import { timingSafeEqual } from "node:crypto";
import { TOKEN_BYTES } from "@whc/sealing";
import type { CatalogStore } from "./ports.js";
import { type ApiKeyRecord, type AppendResult, type Cursor, type EndpointRecord, type NewEvent, type RaisedAlert } from "./types.js";
import { isUuid, newId, requireUuid } from "./ids.js";
import {
  apiKeyToProto,
  breakerToProto,
  endpointFromProto,
  endpointPatchFromProto,
  endpointToProto,
  eventSummaryToProto,
  eventToProto,
  newEventFromCapture,
  newEventFromProto,
} from "./convert.js";
import { forwardMethods } from "./service-forward.js";
import { auditEntryOf, auditMethods } from "./service-audit.js";
import { listenerMethods } from "./service-listeners.js";
import { alertMethods, createAlertRaiser, type AlertOptions, type RaiseAlerts } from "./service-alerts.js";
import { ALERT_CHANNEL_LIMITS, ALERT_COALESCE_S, DELIVERY_STATES, REDELIVERY_LIMITS, KEY_LIMITS, LISTENER_LIMITS, LISTENER_STALL_S, LISTENER_TTL_S, SCOPES } from "@whc/api-model";
import type { ListenerOptions } from "./service-listeners.js";
import { createSchemaLearner, type SchemaLearner } from "./schema-learner.js";
import { observationsOf, schemaMethods } from "./service-schemas.js";
import { MAX_DEDUPE_KEY_BYTES, MAX_DEDUPE_WINDOW_MS } from "./dedupe.js";
import { redeliveryMethods } from "./service-redeliveries.js";
import type { RedeliveryLimits } from "./types.js";

const DAY_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

/** The actions a GetEvent may record: the detail read and the cURL export. */
const READ_ACTIONS: readonly string[] = ["event.read", "event.curl_exported"];

/** A replay target as an audit entry keeps it: its origin, never its path or query (a token may sit there). */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "";
  }
}

function cursorOf(c: { receivedAtMs: bigint; id: string } | undefined, field: string): Cursor | undefined {
  if (!c) return undefined;
  requireUuid(`${field}Id`, c.id);
  return { receivedAt: Number(c.receivedAtMs), id: c.id };
}

/** A list's forward_state: a state, or "none" for events never forwarded. */
function forwardStateOf(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value !== "none" && !(DELIVERY_STATES as readonly string[]).includes(value)) throw validationFailed("forward_state", "unknown");
  return value;
}

/** A list's destination_id: a UUID. */
function destinationIdOf(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  requireUuid("destination_id", value);
  return value.toLowerCase();
}

function appendedToProto(a: AppendResult | undefined) {
  if (!a) return { endpointMissing: true };
  return {
    id: a.id,
    receivedAtMs: BigInt(a.receivedAt),
    responseCode: a.responseCode,
    ...(a.sequenceIndex !== undefined ? { sequenceIndex: BigInt(a.sequenceIndex) } : {}),
    ...(a.duplicateOf !== undefined ? { duplicateOf: a.duplicateOf } : {}),
  };
}

function sameKey(a: { wrappedKey: Uint8Array; keyId: string }, b: { wrappedKey: Uint8Array; keyId: string }): boolean {
  return a.keyId === b.keyId && Buffer.from(a.wrappedKey).equals(b.wrappedKey);
}

export interface CatalogServiceOptions {
  now?: () => number;
  /** Endpoints an account may have (WHC_QUOTA_ENDPOINTS); unset: no limit. */
  endpointQuota?: number;
  /** Usable keys an account may have for CreateApiKey (WHC_QUOTA_KEYS; ADR 0054); unset: no limit. */
  keyQuota?: number;
  /** Listener liveness (design §19): each defaults to its value in @whc/api-model's LISTENER_* constants. */
  listeners?: Partial<ListenerOptions>;
  /** Alerts (design §18): the coalescing window (ALERT_COALESCE_S) and channels per account (ALERT_CHANNEL_LIMITS). */
  alerts?: Partial<AlertOptions>;
  /** How stale a key's lastUsedAt may get before a use writes it again (ADR 0051); default a minute. */
  lastUsedIntervalMs?: number;
  /** Told when a key's last use could not be written (the key is accepted all the same). */
  logger?: { warn(obj: object, msg: string): void };
  /**
   * Learns the shapes of stored captures (design §19; ADR 0090); default: a learner with its
   * defaults and no drift hook. The composition passes one it closes before the store.
   */
  schemaLearner?: SchemaLearner;
  /** Bulk redelivery's limits (ADR 0089); default REDELIVERY_LIMITS of @whc/api-model. */
  redeliveries?: Partial<RedeliveryLimits>;
}

/** A key's lastUsedAt is written at most this often (ADR 0051). */
export const LAST_USED_INTERVAL_MS = 60_000;

/** The largest page of endpoints one call answers (the gateway asks for at most 500). */
export const MAX_ENDPOINT_PAGE = 1000;

type CatalogMethods<K extends keyof ServiceImpl<typeof CatalogService>> = Pick<ServiceImpl<typeof CatalogService>, K>;

function requireScopes(scopes: readonly string[]): string[] {
  if (scopes.length === 0) throw validationFailed("scopes", "required");
  scopes.forEach((s, i) => {
    if (!(SCOPES as readonly string[]).includes(s)) throw validationFailed(`scopes.${i}`, "format");
  });
  return [...new Set(scopes)];
}

function apiKeyMethods(
  store: CatalogStore,
  now: () => number,
  lastUsedIntervalMs: number,
  logger: { warn(obj: object, msg: string): void } | undefined,
  keyQuota: number | undefined,
): CatalogMethods<"authenticateApiKey" | "ensureApiKey" | "createApiKey" | "listApiKeys" | "revokeApiKey" | "countApiKeys" | "purgeApiKeys"> {
  /** lastUsedAt, written only when the stored one is older than the interval (ADR 0051). */
  async function noteUse(key: ApiKeyRecord, at: number): Promise<void> {
    if (key.lastUsedAt !== undefined && at - key.lastUsedAt < lastUsedIntervalMs) return;
    try {
      await store.touchApiKey(key.id, at, at - lastUsedIntervalMs);
    } catch (err) {
      // A key is not refused because its last use could not be noted.
      logger?.warn({ err, keyId: key.id }, "api key lastUsedAt not recorded");
    }
  }

  return {
    async authenticateApiKey(req) {
      if (req.keyHash.length !== 32) throw new AppError("unauthorized", "bad key hash");
      const key = await store.findApiKeyByHash(req.keyHash);
      const at = now();
      if (!key || key.revokedAt !== undefined || !timingSafeEqual(key.keyHash, req.keyHash)) {
        throw new AppError("unauthorized", "unknown or revoked key");
      }
      if (key.expiresAt !== undefined && key.expiresAt <= at) throw new AppError("unauthorized", "expired key");
      await noteUse(key, at);
      return create(AuthenticateApiKeyResponseSchema, {
        accountId: key.accountId,
        keyId: key.id,
        prefix: key.prefix,
        scopes: key.scopes,
        endpointIds: key.endpointIds,
      });
    },

    async ensureApiKey(req) {
      if (!req.accountName) throw validationFailed("account_name", "required");
      if (req.keyHash.length !== 32) throw validationFailed("key_hash", "length");
      const { key, created } = await store.ensureApiKey(req.accountName, req.keyHash, req.prefix, now(), req.name);
      return { key: apiKeyToProto(key), created };
    },

    async createApiKey(req) {
      if (!req.accountId) throw validationFailed("account_id", "required");
      if (req.keyHash.length !== 32) throw validationFailed("key_hash", "length");
      if (req.name.length > KEY_LIMITS.nameLength) throw validationFailed("name", "length");
      if (req.endpointIds.length > KEY_LIMITS.endpointIds) throw validationFailed("endpoint_ids", "length");
      req.endpointIds.forEach((id, i) => requireUuid(`endpoint_ids.${i}`, id));
      const at = now();
      const record = {
        id: newId(),
        accountId: req.accountId,
        name: req.name,
        prefix: req.prefix,
        keyHash: req.keyHash,
        scopes: requireScopes(req.scopes),
        endpointIds: [...new Set(req.endpointIds.map((id) => id.toLowerCase()))],
        createdAt: at,
        expiresAt: req.expiresAtMs === undefined ? undefined : Number(req.expiresAtMs),
        lastUsedAt: undefined,
        revokedAt: undefined,
      };
      const audit = auditEntryOf(req.audit, {
        accountId: req.accountId,
        action: "key.created",
        at,
        details: { id: record.id, prefix: record.prefix, name: record.name, scopes: record.scopes, endpointIds: record.endpointIds },
      });
      // EnsureApiKey (bootstrap keys, an account's first key) is never counted against it.
      const key = await store.createApiKey(record, audit, keyQuota);
      return { key: apiKeyToProto(key) };
    },

    async listApiKeys(req) {
      const keys = await store.listApiKeys({ accountName: req.accountName || undefined, accountId: req.accountId || undefined });
      return { keys: keys.map(apiKeyToProto) };
    },

    async revokeApiKey(req) {
      requireUuid("key_id", req.keyId);
      const at = now();
      const keyId = req.keyId.toLowerCase();
      const audit = req.audit && auditEntryOf(req.audit, { accountId: req.accountId, action: "key.revoked", at, details: { id: keyId } });
      if (audit && !req.accountId) throw validationFailed("account_id", "required");
      const key = await store.revokeApiKey(keyId, at, req.accountId || undefined, audit);
      if (!key) throw notFound("api key");
      return { key: apiKeyToProto(key) };
    },

    async countApiKeys() {
      return { active: BigInt(await store.countActiveApiKeys()) };
    },

    async purgeApiKeys(req) {
      return { purged: BigInt(await store.purgeApiKeys(Number(req.beforeMs))) };
    },
  };
}

/** The endpoints as protobuf, with their destinations' breakers when asked (those with destinations only). */
async function withBreakers(store: CatalogStore, endpoints: readonly EndpointRecord[], include: boolean, includeSecret = false): Promise<Endpoint[]> {
  const protos = endpoints.map((e) => endpointToProto(e, includeSecret));
  const ids = include ? endpoints.filter((e) => e.forwardJson !== "").map((e) => e.id) : [];
  if (ids.length === 0) return protos;
  const breakers = await store.destinationBreakers(ids);
  for (const p of protos) p.breakers = breakers.filter((b) => b.endpointId === p.id).map(breakerToProto);
  return protos;
}

/** Endpoints; another account's endpoint is not_found, like an unknown one. */
function endpointMethods(
  store: CatalogStore,
  now: () => number,
  endpointQuota: number | undefined,
): CatalogMethods<"createEndpoint" | "getEndpoint" | "listEndpoints" | "updateEndpoint" | "deleteEndpoint" | "countRejections"> {
  return {
    async createEndpoint(req) {
      if (!req.endpoint) throw validationFailed("endpoint", "required");
      if (!req.endpoint.accountId) throw validationFailed("account_id", "required");
      const at = now();
      const id = newId();
      const fields = endpointFromProto(req.endpoint);
      const audit = auditEntryOf(req.audit, { accountId: fields.accountId, action: "endpoint.created", at, endpointId: id, details: { slug: fields.slug } });
      const created = await store.createEndpoint({ ...fields, id, createdAt: at, updatedAt: at }, endpointQuota, audit);
      return { endpoint: (await withBreakers(store, [created], true))[0]! };
    },

    async getEndpoint(req) {
      requireUuid("endpoint_id", req.endpointId);
      const endpoint = await store.getEndpoint(req.endpointId, req.accountId || undefined);
      if (!endpoint) throw notFound("endpoint");
      return { endpoint: (await withBreakers(store, [endpoint], req.includeBreakers, req.includeSealedSecret))[0]! };
    },

    // One more than asked tells whether more follow.
    async listEndpoints(req) {
      if (req.after) requireUuid("after", req.after);
      if (req.limit < 0) throw validationFailed("limit", "range");
      if (req.limit === 0) return { endpoints: await withBreakers(store, await store.listEndpoints(req.accountId), req.includeBreakers), hasMore: false };
      const limit = Math.min(req.limit, MAX_ENDPOINT_PAGE);
      const found = await store.listEndpoints(req.accountId, { after: req.after.toLowerCase() || undefined, limit: limit + 1 });
      return { endpoints: await withBreakers(store, found.slice(0, limit), req.includeBreakers), hasMore: found.length > limit };
    },

    async updateEndpoint(req) {
      requireUuid("endpoint_id", req.endpointId);
      if (!req.accountId) throw validationFailed("account_id", "required");
      if (!req.patch) throw validationFailed("patch", "required");
      if (req.patch.sealedSecret !== undefined && req.patch.sealedSecret.length === 0) {
        throw validationFailed("patch.sealed_secret", "length");
      }
      if (req.patch.sealedTargetSecret !== undefined && req.patch.sealedTargetSecret.length === 0) {
        throw validationFailed("patch.sealed_target_secret", "length");
      }
      // The inbound protection comes whole: its JSON with its sealed secrets, or "" alone.
      if ((req.patch.inboundJson === undefined) !== (req.patch.sealedInbound === undefined) && req.patch.inboundJson !== "") {
        throw validationFailed("patch.sealed_inbound", "required");
      }
      const at = now();
      const audit = auditEntryOf(req.audit, { accountId: req.accountId, action: "endpoint.updated", at, endpointId: req.endpointId });
      const updated = await store.updateEndpoint(req.accountId, req.endpointId, endpointPatchFromProto(req.patch), at, audit);
      if (!updated) throw notFound("endpoint");
      // A destination paused, resumed or removed: its deliveries follow now (the claims would
      // bring them in line anyway, ADR 0088).
      if (req.patch.forwardJson !== undefined) await store.settleDestinations(updated.id, now());
      return { endpoint: (await withBreakers(store, [updated], true))[0]! };
    },

    async deleteEndpoint(req) {
      requireUuid("endpoint_id", req.endpointId);
      const audit = auditEntryOf(req.audit, { accountId: req.accountId, action: "endpoint.deleted", at: now(), endpointId: req.endpointId });
      if (!(await store.deleteEndpoint(req.accountId, req.endpointId, audit))) throw notFound("endpoint");
      return {};
    },

    async countRejections(req) {
      const counts = req.rejections.filter((r) => isUuid(r.endpointId) && r.count > 0n).map((r) => ({ endpointId: r.endpointId.toLowerCase(), count: Number(r.count) }));
      await store.countRejections(counts);
      return {};
    },
  };
}

/** AppendEventsRequest.encoded_captures read (ADR 0013); malformed bytes are the caller's error. */
function encodedCaptures(bytes: Uint8Array): CapturedEvent[] {
  if (bytes.length === 0) return [];
  try {
    return decodeCapturedEvents(bytes);
  } catch (err) {
    if (err instanceof CapturedEventsFormatError) throw validationFailed("encoded_captures", "format", err.message);
    throw err;
  }
}

const NO_ALERTS: readonly RaisedAlert[] = [];

/**
 * signature.failed (design §18) for each stored capture whose signature did not verify, raised
 * once the append committed (ADR 0085). A batch without such a capture costs one comparison per
 * capture and raises nothing.
 */
function signatureFailures(events: readonly NewEvent[], appended: readonly (AppendResult | undefined)[]): readonly RaisedAlert[] {
  let raised: RaisedAlert[] | undefined;
  for (let i = 0; i < events.length; i += 1) {
    const e = events[i]!;
    const stored = appended[i];
    if (e.verification !== "failed" || !stored) continue;
    (raised ??= []).push({
      accountId: e.accountId,
      type: "signature.failed",
      endpointId: e.endpointId,
      data: { eventId: stored.id, provider: e.provider, reason: e.verificationFailureReason, eventType: e.canonicalEventType },
    });
  }
  return raised ?? NO_ALERTS;
}

/** Events, stamped by the store per endpoint inside each append's transaction (ADR 0008). */
function eventMethods(
  store: CatalogStore,
  now: () => number,
  raise: RaiseAlerts,
  learner: SchemaLearner,
): CatalogMethods<"appendEvents" | "listEvents" | "getEvent" | "deleteEvent" | "purgeEvents"> {
  return {
    async appendEvents(req) {
      for (const e of req.events) {
        requireUuid("endpoint_id", e.endpointId);
        if (e.forwardScheduled && !e.forward) throw validationFailed("forward", "required");
        if (e.forward && !e.forward.target) throw validationFailed("forward.target", "required");
        // Stored once per event: a sealed request shares its body's data key (ADR 0009).
        if (e.bodyStored && e.body && e.sealedRequest?.ciphertext.length && !sameKey(e.body, e.sealedRequest)) {
          throw validationFailed("sealed_request.wrapped_key", "format");
        }
      }
      const captured = [...req.captures, ...encodedCaptures(req.encodedCaptures)];
      const captures = captured.map((c) => {
        requireUuid("endpoint_id", c.endpointId);
        if (c.forwardScheduled && !c.forwardTarget && c.deliveries.length === 0) throw validationFailed("deliveries", "required");
        c.deliveries.forEach((d, i) => {
          requireUuid(`deliveries.${i}.destination_id`, d.destinationId);
          if (!d.target) throw validationFailed(`deliveries.${i}.target`, "required");
        });
        if (new Set(c.deliveries.map((d) => d.destinationId)).size !== c.deliveries.length) throw validationFailed("deliveries", "format", "a destination given twice");
        if ((c.body !== undefined || c.sealedRequest.length > 0) && (c.wrappedKey.length === 0 || !c.keyId)) throw validationFailed("wrapped_key", "required");
        if (c.searchTokens.length % TOKEN_BYTES !== 0) throw validationFailed("search_tokens", "format");
        if (c.dedupeKey.length > MAX_DEDUPE_KEY_BYTES) throw validationFailed("dedupe_key", "length");
        if (c.dedupeKey.length > 0 && (c.dedupeWindowMs < 1n || c.dedupeWindowMs > BigInt(MAX_DEDUPE_WINDOW_MS))) throw validationFailed("dedupe_window_ms", "range");
        return newEventFromCapture(c);
      });
      const events = [...req.events.map(newEventFromProto), ...captures];
      const appended = await store.appendEvents(events, now);
      // Learned after the commit, off the answer (ADR 0090).
      learner.observe(observationsOf(captured, appended.slice(req.events.length)));
      const failures = signatureFailures(events, appended);
      if (failures.length > 0) await raise(failures);
      // Asked for (a remote ingest): the answer written in one pass (ADR 0094).
      if (req.encodeAnswer) return { encodedEvents: encodeAppendedEvents(appended) };
      return { events: appended.map(appendedToProto) };
    },

    async listEvents(req) {
      requireUuid("endpoint_id", req.endpointId);
      const endpoint = await store.getEndpoint(req.endpointId, req.accountId);
      if (!endpoint) throw notFound("endpoint");
      const page = await store.listEvents({
        accountId: req.accountId,
        endpointId: req.endpointId,
        before: cursorOf(req.before, "before"),
        after: cursorOf(req.after, "after"),
        fromMs: req.fromMs === undefined ? undefined : Number(req.fromMs),
        toMs: req.toMs === undefined ? undefined : Number(req.toMs),
        eventType: req.eventType,
        provider: req.provider,
        responseCode: req.responseCode,
        verification: req.verification,
        forwardState: forwardStateOf(req.forwardState),
        schemaDrift: req.schemaDrift,
        duplicate: req.duplicate,
        destinationId: destinationIdOf(req.destinationId),
        searchTokens: req.search ? req.searchTokens : undefined,
        limit: Math.min(Math.max(req.limit || 50, 1), 1000),
      });
      return {
        events: page.events.map(eventSummaryToProto),
        hasOlder: page.hasOlder,
        searchExcludedMetadataOnlyCount: page.searchExcludedMetadataOnlyCount,
      };
    },

    async getEvent(req) {
      requireUuid("endpoint_id", req.endpointId);
      requireUuid("event_id", req.eventId);
      const at = now();
      if (req.audit && !READ_ACTIONS.includes(req.audit.action)) throw validationFailed("audit.action", "unknown");
      const audit = auditEntryOf(req.audit, { accountId: req.accountId, action: req.audit?.action ?? "", at, endpointId: req.endpointId, eventId: req.eventId });
      const event = await store.getEvent(req.accountId, req.endpointId, req.eventId, req.markRead ? at : undefined, audit);
      if (!event) throw notFound("event");
      return { event: eventToProto(event) };
    },

    async deleteEvent(req) {
      requireUuid("endpoint_id", req.endpointId);
      requireUuid("event_id", req.eventId);
      const endpoint = await store.getEndpoint(req.endpointId, req.accountId);
      if (!endpoint) throw notFound("endpoint");
      const audit = auditEntryOf(req.audit, { accountId: req.accountId, action: "event.deleted", at: now(), endpointId: req.endpointId, eventId: req.eventId });
      return { deleted: await store.deleteEvent(req.accountId, req.endpointId, req.eventId, audit) };
    },

    async purgeEvents(req) {
      return { purged: BigInt(await store.purgeEvents(Number(req.receivedBeforeMs), now())) };
    },
  };
}

function replayMethods(store: CatalogStore, now: () => number): CatalogMethods<"chargeReplay" | "getReplayUsage" | "recordReplayAudit"> {
  return {
    async chargeReplay(req) {
      if (!DAY_PATTERN.test(req.day)) throw validationFailed("day", "format");
      const charge = await store.chargeReplay(req.accountId, req.day, req.limit);
      return { allowed: charge.allowed, used: charge.used, remaining: Math.max(req.limit - charge.used, 0) };
    },

    async getReplayUsage(req) {
      if (!DAY_PATTERN.test(req.day)) throw validationFailed("day", "format");
      return { used: await store.getReplayUsage(req.accountId, req.day) };
    },

    async recordReplayAudit(req) {
      const audit: ReplayAudit | undefined = req.audit;
      if (!audit) throw validationFailed("audit", "required");
      const id = audit.id || newId();
      const createdAt = Number(audit.createdAtMs) || now();
      const entry = auditEntryOf(req.context, {
        accountId: audit.accountId,
        action: "event.replayed",
        at: createdAt,
        endpointId: audit.endpointId,
        eventId: audit.eventId,
        details: { audit_id: id, result: audit.result, mode: audit.mode, target: originOf(audit.targetUrl) },
      });
      await store.recordReplayAudit({
        id,
        accountId: audit.accountId,
        endpointId: audit.endpointId,
        eventId: audit.eventId,
        keyId: audit.keyId,
        targetUrl: audit.targetUrl,
        mode: audit.mode,
        result: audit.result,
        targetStatus: audit.targetStatus,
        networkFailureReason: audit.networkFailureReason,
        durationMs: Number(audit.durationMs),
        createdAt,
        requestId: audit.requestId,
        client: audit.client,
      }, entry);
      return { id };
    },
  };
}

/** The catalog's RPC surface over any CatalogStore. */
export function createCatalogService(
  store: CatalogStore,
  options: CatalogServiceOptions = {},
): ServiceImpl<typeof CatalogService> {
  const now = options.now ?? Date.now;
  const alerts: AlertOptions = { coalesceMs: ALERT_COALESCE_S * 1000, perAccount: ALERT_CHANNEL_LIMITS.perAccount, ...options.alerts };
  const raise = createAlertRaiser(store, now, alerts, options.logger);
  const learner = options.schemaLearner ?? createSchemaLearner(store, { logger: options.logger });
  return {
    ...apiKeyMethods(store, now, options.lastUsedIntervalMs ?? LAST_USED_INTERVAL_MS, options.logger, options.keyQuota),
    ...endpointMethods(store, now, options.endpointQuota),
    ...eventMethods(store, now, raise, learner),
    ...schemaMethods(store),
    ...replayMethods(store, now),
    ...forwardMethods(store, now, raise),
    ...auditMethods(store, now),
    ...listenerMethods(
      store,
      now,
      {
        ttlMs: LISTENER_TTL_S * 1000,
        stallMs: LISTENER_STALL_S * 1000,
        perEndpoint: LISTENER_LIMITS.perEndpoint,
        ...options.listeners,
      },
      raise,
    ),
    ...alertMethods(store, now, alerts),
    ...redeliveryMethods(store, now, { ...REDELIVERY_LIMITS, ...options.redeliveries }),
  };
}
