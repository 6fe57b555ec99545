import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { ListenerSchema, type CatalogService, type Listener } from "@whc/contracts";
import { LISTENER_LIMITS } from "@whc/api-model";
import { notFound, validationFailed } from "@whc/errors";
import type { CatalogStore } from "./ports.js";
import type { Cursor, ListenerRecord } from "./types.js";
import { requireUuid } from "./ids.js";
import { isStalled, listenerQuotaExceeded, nextLagRun } from "./listeners.js";
import type { RaiseAlerts } from "./service-alerts.js";

export interface ListenerOptions {
  /** How long after its last heartbeat a listener is gone (WHC_LISTENER_TTL_S). */
  ttlMs: number;
  /** How long a lag must grow before the listener is stalled. */
  stallMs: number;
  /** Live listeners per endpoint. */
  perEndpoint: number;
}

function listenerToProto(l: ListenerRecord, stallMs: number): Listener {
  return create(ListenerSchema, {
    id: l.id,
    accountId: l.accountId,
    endpointId: l.endpointId,
    host: l.host,
    startedAtMs: BigInt(l.startedAt),
    lastSeenAtMs: BigInt(l.lastSeenAt),
    ...(l.cursor ? { cursorAtMs: BigInt(l.cursor.receivedAt) } : {}),
    cursorId: l.cursor?.id ?? "",
    lagEvents: l.lagEvents,
    lastError: l.lastError ?? "",
    stalled: isStalled(l, stallMs),
  });
}

/** The heartbeat's fields, checked: the gateway validated them already, another caller may not have. */
function heartbeatOf(req: { accountId: string; listener?: Listener | undefined }): Omit<ListenerRecord, "lastSeenAt" | "expiresAt" | "lagEvents" | "lagRunSince"> {
  if (!req.accountId) throw validationFailed("account_id", "required");
  const l = req.listener;
  if (!l) throw validationFailed("listener", "required");
  requireUuid("listener.id", l.id);
  requireUuid("listener.endpoint_id", l.endpointId);
  if (!l.host || l.host.length > LISTENER_LIMITS.hostLength) throw validationFailed("listener.host", l.host ? "length" : "required");
  if (l.lastError.length > LISTENER_LIMITS.lastErrorLength) throw validationFailed("listener.last_error", "length");
  if (l.startedAtMs <= 0n) throw validationFailed("listener.started_at_ms", "range");
  let cursor: Cursor | undefined;
  if (l.cursorAtMs !== undefined) {
    requireUuid("listener.cursor_id", l.cursorId);
    cursor = { receivedAt: Number(l.cursorAtMs), id: l.cursorId.toLowerCase() };
  }
  return {
    id: l.id.toLowerCase(),
    accountId: req.accountId,
    endpointId: l.endpointId.toLowerCase(),
    host: l.host,
    startedAt: Number(l.startedAtMs),
    cursor,
    lastError: l.lastError || undefined,
  };
}

/** Listener liveness (design §19; ADR 0062): heartbeats, the live list, and a clean goodbye. */
export function listenerMethods(
  store: CatalogStore,
  now: () => number,
  options: ListenerOptions,
  raise: RaiseAlerts = async () => undefined,
): Pick<ServiceImpl<typeof CatalogService>, "putListener" | "listListeners" | "deleteListener"> {
  return {
    async putListener(req) {
      const heard = heartbeatOf(req);
      if (!(await store.getEndpoint(heard.endpointId, heard.accountId))) throw notFound("endpoint");
      const at = now();
      const live = await store.listListeners(heard.accountId, heard.endpointId, at);
      const previous = live.find((l) => l.id === heard.id);
      const lag = heard.cursor ? await store.countEventsAfter(heard.accountId, heard.endpointId, heard.cursor, LISTENER_LIMITS.lagBound) : 0;
      const listener: ListenerRecord = { ...heard, lastSeenAt: at, expiresAt: at + options.ttlMs, lagEvents: lag, ...nextLagRun(previous, lag, at) };
      if (!(await store.putListener(listener, options.perEndpoint, at))) throw listenerQuotaExceeded(options.perEndpoint);
      // listener.stalled once, when this heartbeat turns it stalled (ADR 0062): the previous
      // record and the new one are both at hand here.
      if (isStalled(listener, options.stallMs) && !(previous && isStalled(previous, options.stallMs))) {
        await raise([
          {
            accountId: listener.accountId,
            type: "listener.stalled",
            endpointId: listener.endpointId,
            data: { listenerId: listener.id, host: listener.host, lagEvents: listener.lagEvents, behindSince: new Date(listener.lagRunSince).toISOString() },
          },
        ]);
      }
      return { listener: listenerToProto(listener, options.stallMs) };
    },

    async listListeners(req) {
      if (!req.accountId) throw validationFailed("account_id", "required");
      requireUuid("endpoint_id", req.endpointId);
      if (!(await store.getEndpoint(req.endpointId, req.accountId))) throw notFound("endpoint");
      const live = await store.listListeners(req.accountId, req.endpointId, now());
      return { listeners: live.map((l) => listenerToProto(l, options.stallMs)) };
    },

    async deleteListener(req) {
      if (!req.accountId) throw validationFailed("account_id", "required");
      requireUuid("endpoint_id", req.endpointId);
      requireUuid("listener_id", req.listenerId);
      if (!(await store.getEndpoint(req.endpointId, req.accountId))) throw notFound("endpoint");
      return { deleted: await store.deleteListener(req.accountId, req.endpointId, req.listenerId.toLowerCase()) };
    },
  };
}
