import type { ServiceImpl } from "@connectrpc/connect";
import type { CatalogService, ForwardAttempt, RecordForwardAttemptRequest } from "@whc/contracts";
import { notFound, validationFailed } from "@whc/errors";
import type { CatalogStore } from "./ports.js";
import { breakerToProto, endpointToProto, eventToProto, forwardAttemptFromProto, forwardToProto } from "./convert.js";
import { requireUuid } from "./ids.js";
import { auditEntryOf } from "./service-audit.js";
import { DELIVERY_STATES, ATTEMPT_TRIGGERS, type DeliveryState } from "@whc/api-model";
import type { AttemptTransition, DeliveryRef, EventRef } from "@whc/ports";
import type { AttemptRecord, BreakerNotice, DeliveryRecord, RaisedAlert } from "./types.js";
import type { RaiseAlerts } from "./service-alerts.js";

const DEFAULT_CLAIM_LIMIT = 50;
const MAX_CLAIM_LIMIT = 500;
/** A longer claim would hide a delivery that long after its worker died. */
const MAX_CLAIM_MS = 86_400_000;
const MAX_STATUS = 999;

function eventRefOf(req: { accountId: string; endpointId: string; eventId: string }): EventRef {
  if (!req.accountId) throw validationFailed("account_id", "required");
  requireUuid("endpoint_id", req.endpointId);
  requireUuid("event_id", req.eventId);
  return { accountId: req.accountId, endpointId: req.endpointId, eventId: req.eventId };
}

function deliveryRefOf(req: { accountId: string; endpointId: string; eventId: string; destinationId: string }): DeliveryRef {
  const ref = eventRefOf(req);
  requireUuid("destination_id", req.destinationId);
  return { ...ref, destinationId: req.destinationId.toLowerCase() };
}

function checkAttempt(a: ForwardAttempt | undefined): ForwardAttempt {
  if (!a) throw validationFailed("attempt", "required");
  if (a.n < 1) throw validationFailed("attempt.n", "range");
  if (!(ATTEMPT_TRIGGERS as readonly string[]).includes(a.trigger)) throw validationFailed("attempt.trigger", "unknown");
  if (!a.url) throw validationFailed("attempt.url", "required");
  if (a.status < 0 || a.status > MAX_STATUS) throw validationFailed("attempt.status", "range");
  if (a.durationMs < 0n) throw validationFailed("attempt.duration_ms", "range");
  if (a.body && a.body.ciphertext.length > 0 && !a.body.keyId) throw validationFailed("attempt.body.key_id", "required");
  if (a.requestSha256 && !/^[0-9a-f]{64}$/.test(a.requestSha256)) throw validationFailed("attempt.request_sha256", "format");
  if (a.message.length > 4096) throw validationFailed("attempt.message", "length");
  return a;
}

/**
 * Empty state: an attempt outside the outbox. Else the worker's verdict: a known state, its
 * claim's owner, and for a retry (pending) the time it is due again.
 */
function transitionOf(req: RecordForwardAttemptRequest): AttemptTransition {
  if (!req.state) return { kind: "direct" };
  if (!(DELIVERY_STATES as readonly string[]).includes(req.state)) throw validationFailed("state", "unknown");
  if (!req.claimOwner) throw validationFailed("claim_owner", "required");
  const state = req.state as DeliveryState;
  if (state === "pending" && req.nextAttemptAtMs === undefined) throw validationFailed("next_attempt_at_ms", "required");
  const nextAttemptAt = state === "pending" ? Number(req.nextAttemptAtMs) : undefined;
  return { kind: "worker", owner: req.claimOwner, state, nextAttemptAt };
}

/**
 * delivery.failed or delivery.exhausted (design §18) when this attempt made the delivery so:
 * the relay outbox worker's verdict (it applied: the stored state is the verdict's), or a proxy's
 * one attempt (trigger `initial` outside the outbox) that failed. A redelivery or a `whc
 * listen` attempt has someone watching its answer, and raises nothing (ADR 0085).
 */
function deliveryAlert(ref: EventRef, attempt: AttemptRecord, transition: AttemptTransition, forward: DeliveryRecord): RaisedAlert | undefined {
  const state = forward.state;
  if (state !== "failed" && state !== "exhausted") return undefined;
  const made = transition.kind === "worker" ? transition.state === state : attempt.trigger === "initial";
  if (!made) return undefined;
  return {
    accountId: ref.accountId,
    type: `delivery.${state}`,
    endpointId: ref.endpointId,
    data: { eventId: ref.eventId, attempts: attempt.n, status: attempt.status || null, error: attempt.error || null },
  };
}

/**
 * destination.opened or destination.closed (design §18) when the attempt just recorded opened or
 * closed its destination's breaker: decided in the record's transaction, so one replica's
 * record raises it, once.
 */
function breakerAlert(notice: BreakerNotice | undefined): RaisedAlert | undefined {
  if (!notice) return undefined;
  const b = notice.breaker;
  return {
    accountId: b.accountId,
    type: `destination.${notice.change}`,
    endpointId: b.endpointId,
    data: {
      destinationId: b.destinationId,
      name: notice.name,
      state: b.state,
      consecutiveFailures: b.consecutiveFailures,
      held: b.held,
      since: b.since === undefined ? null : new Date(b.since).toISOString(),
      nextProbeAt: b.state === "open" && b.nextProbeAt !== undefined ? new Date(b.nextProbeAt).toISOString() : null,
    },
  };
}

/** The relay outbox and the forward attempts (design §11). */
export function forwardMethods(
  store: CatalogStore,
  now: () => number,
  raise: RaiseAlerts = async () => undefined,
): Pick<ServiceImpl<typeof CatalogService>, "claimDeliveries" | "loadDelivery" | "beginForwardAttempt" | "recordForwardAttempt" | "getOutboxStats" | "recordProxyAnswer"> {
  return {
    async claimDeliveries(req) {
      if (!req.owner) throw validationFailed("owner", "required");
      const limit = req.limit === 0 ? DEFAULT_CLAIM_LIMIT : req.limit;
      if (limit < 1 || limit > MAX_CLAIM_LIMIT) throw validationFailed("limit", "range");
      const claimMs = Number(req.claimMs);
      if (claimMs < 1 || claimMs > MAX_CLAIM_MS) throw validationFailed("claim_ms", "range");
      const at = now();
      const { claims, limiterWaits } = await store.claimDeliveries(req.owner, at, claimMs, limit);
      // A full page: the worker claims again at once, and learns the next due time then.
      const next = claims.length < limit ? await store.nextDueAt(at) : undefined;
      // A paced delivery's send is anchored on its turn (the claim's time), not on when this
      // answer leaves: the commit's fsync and the lock's wait vary by hundreds of ms under load,
      // and would shift one turn's send towards the next (ADR 0087).
      const answeredAt = now();
      const sendAfter = (ms: number | undefined) => (ms ? Math.max(0, at + ms - answeredAt) : 0);
      return {
        deliveries: claims.map((c) => ({
          accountId: c.accountId,
          endpointId: c.endpointId,
          eventId: c.eventId,
          destinationId: c.destinationId,
          attempt: c.attempt,
          bulkJobId: c.bulkJobId ?? "",
          attemptBase: c.attemptBase ?? 0,
          counted: c.counted ?? 0,
          sendAfterMs: sendAfter(c.sendAfterMs),
        })),
        nextDueInMs: next === undefined ? 0n : BigInt(Math.max(1, next - at)),
        limiterWaits,
      };
    },

    async loadDelivery(req) {
      const ref = eventRefOf(req);
      const [endpoint, event] = await Promise.all([
        store.getEndpoint(ref.endpointId, ref.accountId),
        store.getEvent(ref.accountId, ref.endpointId, ref.eventId, undefined),
      ]);
      if (!endpoint) throw notFound("endpoint");
      if (!event) throw notFound("event");
      return { endpoint: endpointToProto(endpoint, true), event: eventToProto(event) };
    },

    async beginForwardAttempt(req) {
      const ref = deliveryRefOf(req);
      if (!req.target) throw validationFailed("target", "required");
      const attempt = await store.beginForwardAttempt(ref, req.target);
      if (attempt === undefined) throw notFound("event");
      return { attempt };
    },

    async recordForwardAttempt(req) {
      const ref = deliveryRefOf(req);
      const attempt = forwardAttemptFromProto(checkAttempt(req.attempt));
      const audit = auditEntryOf(req.audit, {
        ...ref,
        action: "event.redelivered",
        at: now(),
        details: {
          destinationId: ref.destinationId,
          attempt: attempt.n,
          ...(attempt.status ? { status: attempt.status } : {}),
          ...(attempt.error ? { error: attempt.error } : {}),
        },
      });
      const transition = transitionOf(req);
      const recorded = await store.recordForwardAttempt(ref, attempt, transition, audit, now());
      if (!recorded) return { recorded: false };
      const alerts = [deliveryAlert(ref, attempt, transition, recorded.delivery), breakerAlert(recorded.breaker)].filter((a) => a !== undefined);
      if (alerts.length > 0) await raise(alerts);
      return { recorded: true, forward: forwardToProto(recorded.delivery), forwardState: recorded.forwardState };
    },

    async recordProxyAnswer(req) {
      const ref = eventRefOf(req);
      if (req.responseCode < 100 || req.responseCode > MAX_STATUS) throw validationFailed("response_code", "range");
      return { recorded: await store.recordProxyAnswer(ref, req.responseCode, req.forwardFailed) };
    },

    async getOutboxStats() {
      const [stats, breakers] = await Promise.all([store.outboxStats(), store.activeBreakers()]);
      return {
        pending: BigInt(stats.pending),
        ...(stats.oldestDueAt !== undefined ? { oldestDueAtMs: BigInt(stats.oldestDueAt) } : {}),
        breakers: breakers.map(breakerToProto),
      };
    },
  };
}
