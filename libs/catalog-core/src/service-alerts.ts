import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { AlertChannelSchema, AlertSchema, type AlertChannel, type CatalogService } from "@whc/contracts";
import { ALERT_CHANNEL_LIMITS, ALERT_CHANNEL_TYPES, ALERT_EVENTS, ALERT_STATES, AUDIT_DETAILS_MAX_BYTES, type AlertChannelType, type AlertState } from "@whc/api-model";
import { notFound, validationFailed } from "@whc/errors";
import type { CatalogStore } from "./ports.js";
import type { AlertChannelRecord, AlertRecord, RaisedAlert } from "./types.js";
import { isUuid, newId, requireUuid } from "./ids.js";
import { auditEntryOf } from "./service-audit.js";

export interface AlertOptions {
  /** Repeats of one type for one endpoint within this are one alert per channel (WHC_ALERT_COALESCE_S). */
  coalesceMs: number;
  /** Channels one account may have. */
  perAccount: number;
}

/** Where an alert raised inside the catalog goes; it never throws (see createAlertRaiser). */
export type RaiseAlerts = (raised: readonly RaisedAlert[]) => Promise<void>;

const DEFAULT_CLAIM_LIMIT = 50;
const MAX_CLAIM_LIMIT = 500;
const MAX_CLAIM_MS = 86_400_000;
const MAX_RAISED_PER_CALL = 1000;

/** A URL's origin, which an audit entry may keep (a Slack webhook's path is its credential). */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "";
  }
}

function protocolOf(url: string): string {
  try {
    return new URL(url).protocol;
  } catch {
    return "";
  }
}

export function alertChannelToProto(c: AlertChannelRecord, includeSecret = false): AlertChannel {
  return create(AlertChannelSchema, {
    id: c.id,
    accountId: c.accountId,
    name: c.name,
    type: c.type,
    url: c.url,
    events: c.events,
    endpointIds: c.endpointIds,
    secretSet: (c.sealedSecret?.length ?? 0) > 0,
    ...(includeSecret && c.sealedSecret ? { sealedSecret: c.sealedSecret } : {}),
    createdAtMs: BigInt(c.createdAt),
    ...(c.lastDelivery
      ? {
          lastDelivery: {
            alertId: c.lastDelivery.alertId,
            type: c.lastDelivery.type,
            atMs: BigInt(c.lastDelivery.at),
            state: c.lastDelivery.state,
            attempts: c.lastDelivery.attempts,
            status: c.lastDelivery.status,
            error: c.lastDelivery.error,
          },
        }
      : {}),
  });
}

function alertToProto(a: AlertRecord) {
  return create(AlertSchema, {
    id: a.id,
    accountId: a.accountId,
    channelId: a.channelId,
    type: a.type,
    endpointId: a.endpointId,
    endpointSlug: a.endpointSlug,
    dataJson: a.dataJson,
    count: a.count,
    firstAtMs: BigInt(a.firstAt),
    lastAtMs: BigInt(a.lastAt),
  });
}

/** A channel as CreateAlertChannel takes it, checked: the gateway validated it already, another caller may not have. */
function channelOf(req: {
  accountId: string;
  name: string;
  type: string;
  url: string;
  events: string[];
  endpointIds: string[];
  sealedSecret: Uint8Array;
}): Omit<AlertChannelRecord, "id" | "createdAt"> {
  if (!req.accountId) throw validationFailed("account_id", "required");
  if (!req.name || req.name.length > ALERT_CHANNEL_LIMITS.nameLength) throw validationFailed("name", req.name ? "length" : "required");
  if (!(ALERT_CHANNEL_TYPES as readonly string[]).includes(req.type)) throw validationFailed("type", "unknown");
  if (!req.url || req.url.length > ALERT_CHANNEL_LIMITS.urlLength) throw validationFailed("url", req.url ? "length" : "required");
  if (!/^https?:$/.test(protocolOf(req.url))) throw validationFailed("url", "format");
  if (req.events.length === 0) throw validationFailed("events", "required");
  req.events.forEach((e, i) => {
    if (!(ALERT_EVENTS as readonly string[]).includes(e)) throw validationFailed(`events.${i}`, "unknown");
  });
  if (req.endpointIds.length > ALERT_CHANNEL_LIMITS.endpointIds) throw validationFailed("endpoint_ids", "length");
  req.endpointIds.forEach((id, i) => requireUuid(`endpoint_ids.${i}`, id));
  const webhook = req.type === "webhook";
  if (webhook && req.sealedSecret.length === 0) throw validationFailed("sealed_secret", "required");
  if (!webhook && req.sealedSecret.length > 0) throw validationFailed("sealed_secret", "unknown");
  return {
    accountId: req.accountId,
    name: req.name,
    type: req.type as AlertChannelType,
    url: req.url,
    events: [...new Set(req.events)],
    endpointIds: [...new Set(req.endpointIds.map((id) => id.toLowerCase()))],
    sealedSecret: webhook ? req.sealedSecret : undefined,
    lastDelivery: undefined,
  };
}

/** An occurrence as RaiseAlerts carries it, checked. */
function raisedOf(r: { accountId: string; type: string; endpointId: string; dataJson: string; channelId: string }, i: number): RaisedAlert {
  if (!r.accountId) throw validationFailed(`alerts.${i}.account_id`, "required");
  if (!(ALERT_EVENTS as readonly string[]).includes(r.type)) throw validationFailed(`alerts.${i}.type`, "unknown");
  if (r.endpointId) requireUuid(`alerts.${i}.endpoint_id`, r.endpointId);
  if (r.channelId) requireUuid(`alerts.${i}.channel_id`, r.channelId);
  if (Buffer.byteLength(r.dataJson) > AUDIT_DETAILS_MAX_BYTES) throw validationFailed(`alerts.${i}.data_json`, "length");
  let data: unknown = {};
  if (r.dataJson) {
    try {
      data = JSON.parse(r.dataJson);
    } catch {
      throw validationFailed(`alerts.${i}.data_json`, "format");
    }
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) throw validationFailed(`alerts.${i}.data_json`, "type");
  return {
    accountId: r.accountId,
    type: r.type,
    endpointId: r.endpointId ? r.endpointId.toLowerCase() : undefined,
    data: data as Record<string, unknown>,
    channelId: r.channelId ? r.channelId.toLowerCase() : undefined,
  };
}

/**
 * The one way an alert is raised (design §18; ADR 0085): every occurrence goes to the store,
 * which gives it to the channels that want it, coalesced. What raises an alert has already
 * happened (a capture stored, a delivery given up), so a store that cannot take the alert is
 * logged and never fails the caller; nothing is raised for an empty list.
 */
export function createAlertRaiser(
  store: CatalogStore,
  now: () => number,
  options: Pick<AlertOptions, "coalesceMs">,
  logger: { warn(obj: object, msg: string): void } | undefined,
): RaiseAlerts {
  return async (raised) => {
    if (raised.length === 0) return;
    try {
      await store.raiseAlerts(raised, now(), options.coalesceMs);
    } catch (err) {
      logger?.warn({ err, types: [...new Set(raised.map((r) => r.type))] }, "alert not raised");
    }
  };
}

/** Alert channels, raising alerts from outside the catalog, and the alert outbox (design §18; ADRs 0085, 0086). */
export function alertMethods(
  store: CatalogStore,
  now: () => number,
  options: AlertOptions,
): Pick<ServiceImpl<typeof CatalogService>, "createAlertChannel" | "listAlertChannels" | "deleteAlertChannel" | "raiseAlerts" | "claimAlerts" | "recordAlertAttempt"> {
  return {
    async createAlertChannel(req) {
      const fields = channelOf(req);
      const at = now();
      const channel: AlertChannelRecord = { ...fields, id: newId(), createdAt: at };
      const audit = auditEntryOf(req.audit, {
        accountId: channel.accountId,
        action: "alert_channel.created",
        at,
        details: { id: channel.id, name: channel.name, type: channel.type, origin: originOf(channel.url), events: channel.events, endpointIds: channel.endpointIds },
      });
      const created = await store.createAlertChannel(channel, options.perAccount, audit);
      return { channel: alertChannelToProto(created) };
    },

    async listAlertChannels(req) {
      if (!req.accountId) throw validationFailed("account_id", "required");
      return { channels: (await store.listAlertChannels(req.accountId)).map((c) => alertChannelToProto(c)) };
    },

    async deleteAlertChannel(req) {
      if (!req.accountId) throw validationFailed("account_id", "required");
      requireUuid("channel_id", req.channelId);
      const channelId = req.channelId.toLowerCase();
      const audit = auditEntryOf(req.audit, { accountId: req.accountId, action: "alert_channel.deleted", at: now(), details: { id: channelId } });
      if (!(await store.deleteAlertChannel(req.accountId, channelId, audit))) throw notFound("alert channel");
      return {};
    },

    async raiseAlerts(req) {
      if (req.alerts.length > MAX_RAISED_PER_CALL) throw validationFailed("alerts", "length");
      const raised = req.alerts.map(raisedOf);
      if (raised.length === 0) return { alertIds: [] };
      return { alertIds: await store.raiseAlerts(raised, now(), options.coalesceMs) };
    },

    async claimAlerts(req) {
      if (!req.owner) throw validationFailed("owner", "required");
      const limit = req.limit === 0 ? DEFAULT_CLAIM_LIMIT : req.limit;
      if (limit < 1 || limit > MAX_CLAIM_LIMIT) throw validationFailed("limit", "range");
      const claimMs = Number(req.claimMs);
      if (claimMs < 1 || claimMs > MAX_CLAIM_MS) throw validationFailed("claim_ms", "range");
      const at = now();
      const claims = await store.claimAlerts(req.owner, at, claimMs, limit);
      const next = claims.length < limit ? await store.nextAlertDueAt(at) : undefined;
      return {
        alerts: claims.map((c) => ({ alert: alertToProto(c.alert), channel: alertChannelToProto(c.channel, true), attempt: c.attempt })),
        nextDueInMs: next === undefined ? 0n : BigInt(Math.max(1, next - at)),
      };
    },

    async recordAlertAttempt(req) {
      if (!isUuid(req.alertId)) throw validationFailed("alert_id", "format");
      if (!req.claimOwner) throw validationFailed("claim_owner", "required");
      if (req.attempt < 1) throw validationFailed("attempt", "range");
      if (!(ALERT_STATES as readonly string[]).includes(req.state)) throw validationFailed("state", "unknown");
      const state = req.state as AlertState;
      if (state === "pending" && req.nextAttemptAtMs === undefined) throw validationFailed("next_attempt_at_ms", "required");
      const recorded = await store.recordAlertAttempt(req.alertId.toLowerCase(), req.claimOwner, req.attempt, {
        at: Number(req.atMs) || now(),
        status: req.status,
        error: req.error,
        state,
        nextAttemptAt: state === "pending" ? Number(req.nextAttemptAtMs) : undefined,
      });
      return { recorded };
    },
  };
}
