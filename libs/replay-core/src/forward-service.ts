import type { ServiceImpl } from "@connectrpc/connect";
import type { AuditContext, Forward, ReplayService } from "@whc/contracts";
import { ATTEMPT_ERRORS, LISTEN_DESTINATION_ID, type AttemptTrigger } from "@whc/api-model";
import { AppError, notFound, validationFailed } from "@whc/errors";
import { isUuid } from "@whc/ids";
import { sealUrlFor } from "@whc/sealing";
import {
  createAttemptSender,
  RECORDED_BODY_BYTES,
  type ForwardDeps,
  type ForwardOptions,
  type OpenedDelivery,
  type SentAttempt,
} from "./forward-attempt.js";
import type { DeliveryRef, EventRef } from "@whc/ports";
import { directState, errorOf, outcomeLabel, type AttemptOutcome } from "./forward-policy.js";

type ForwardHandlers = Pick<ServiceImpl<typeof ReplayService>, "forwardEvent" | "recordClientAttempt" | "checkForwardTarget">;

/** The most of a destination's answer a caller may ask back (proxy asks for its inbound limit). */
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

function refOf(req: { accountId: string; endpointId: string; eventId: string }): EventRef {
  if (!req.accountId) throw validationFailed("account_id", "required");
  if (!req.endpointId) throw validationFailed("endpoint_id", "required");
  if (!req.eventId) throw validationFailed("event_id", "required");
  return { accountId: req.accountId, endpointId: req.endpointId, eventId: req.eventId };
}

function resultOf(sent: SentAttempt, state: string, destinationId: string) {
  return {
    n: sent.n,
    trigger: sent.trigger,
    atMs: BigInt(sent.at),
    url: sent.url,
    durationMs: BigInt(Math.round(sent.durationMs)),
    status: sent.status,
    headers: sent.headers.map(([name, value]) => ({ name, value })),
    body: sent.body,
    bodyTruncated: sent.bodyTruncated,
    error: errorOf(sent.outcome),
    state,
    destinationId,
    requestSha256: sent.requestSha256,
    message: sent.message,
  };
}

/** What a client reports (whc listen) as an outcome, to record it like any other attempt. */
function clientOutcome(status: number, error: string): AttemptOutcome {
  if (error) {
    if (!(ATTEMPT_ERRORS as readonly string[]).includes(error)) throw validationFailed("error", "format");
    if (error === "target_not_allowed" || error === "egress_capacity_exhausted") return { kind: "refused", reason: error };
    return { kind: "network_error", reason: error as Extract<AttemptOutcome, { kind: "network_error" }>["reason"] };
  }
  if (!Number.isInteger(status) || status < 100 || status > 599) throw validationFailed("status", status === 0 ? "required" : "range");
  return { kind: "response", status };
}

/**
 * ForwardEvent (proxy's attempt at ingest, manual redelivery), RecordClientAttempt (an
 * attempt `whc listen` made itself) and CheckForwardTarget (the guard's verdict on a
 * destination when an endpoint is saved). None of them touches the replay allowance.
 */
export function createForwardHandlers(deps: ForwardDeps, options: ForwardOptions): ForwardHandlers {
  const now = deps.now ?? Date.now;
  const { catalog, logger } = deps;
  const sender = createAttemptSender(deps, options);

  /** The outcome is the caller's to know even when the catalog cannot record it now. */
  async function recordDirect(ref: DeliveryRef, sent: SentAttempt, before: Forward | undefined, audit?: AuditContext): Promise<string> {
    try {
      const forward = await sender.record(ref, sent, { kind: "direct" }, before?.state, audit);
      if (!forward) throw notFound("event");
      return forward.state;
    } catch (err) {
      if (AppError.is(err) && err.reason === "not_found") throw err;
      logger.error({ err, eventId: ref.eventId, attempt: sent.n }, "forward attempt made but not recorded");
      return directState(sent.outcome, before && { state: before.state, waiting: before.nextAttemptAtMs !== undefined });
    }
  }

  async function begin(delivery: OpenedDelivery): Promise<number> {
    const begun = await catalog.beginForwardAttempt({ ...delivery.ref, target: await sealUrlFor(deps.opener, delivery.event, delivery.target) });
    return begun.attempt;
  }

  return {
    async forwardEvent(req) {
      const ref = refOf(req);
      const trigger: AttemptTrigger = req.trigger === "" ? "manual" : (req.trigger as AttemptTrigger);
      if (trigger !== "manual" && trigger !== "initial") throw validationFailed("trigger", "format");
      if (req.maxResponseBytes < 0) throw validationFailed("max_response_bytes", "range");
      const maxResponseBytes = Math.min(req.maxResponseBytes || RECORDED_BODY_BYTES, MAX_RESPONSE_BYTES);

      if (req.destinationId && !isUuid(req.destinationId)) throw validationFailed("destination_id", "format");
      const loaded = await sender.load({ ...ref, destinationId: req.destinationId.toLowerCase() });
      if (loaded.kind === "missing") throw notFound("event");
      if (loaded.kind === "not_configured") throw new AppError("forward_not_configured", "the endpoint has no such forward destination");
      const { delivery } = loaded;
      // A proxy's capture was appended with attempt 1 begun (ADR 0098): its one initial call uses it.
      const attempt = trigger === "initial" && delivery.delivery?.attempts.length === 0 ? 1 : await begin(delivery);
      const sent = await sender.send(delivery, attempt, trigger, { maxResponseBytes });
      // A redelivery asked for by an API key writes event.redelivered with its attempt.
      const state = await recordDirect(delivery.ref, sent, delivery.delivery, req.audit);
      return { attempt: resultOf(sent, state, delivery.ref.destinationId) };
    },

    async recordClientAttempt(req) {
      const ref = refOf(req);
      if (!req.url) throw validationFailed("url", "required");
      if (req.url.length > 2048) throw validationFailed("url", "length");
      if (req.status !== 0 && req.error !== "") throw validationFailed("status", "format", "give status or error, not both");
      if (req.durationMs < 0n) throw validationFailed("duration_ms", "range");
      const outcome = clientOutcome(req.status, req.error);

      const { event } = await catalog.getEvent({ ...ref, markRead: false });
      // whc listen's attempts are a delivery of their own (design §17), under the nil UUID.
      const listen: DeliveryRef = { ...ref, destinationId: LISTEN_DESTINATION_ID };
      // The URL the client sent to may carry the capture's sub-path and query: sealed like it.
      const begun = await catalog.beginForwardAttempt({ ...listen, target: event ? await sealUrlFor(deps.opener, event, req.url) : req.url });
      const body = Buffer.from(req.body);
      const kept = body.subarray(0, RECORDED_BODY_BYTES);
      const durationMs = Number(req.durationMs);
      const sent: SentAttempt = {
        n: begun.attempt,
        trigger: "cli",
        at: now() - durationMs,
        url: req.url,
        durationMs,
        status: outcome.kind === "response" ? outcome.status : 0,
        headers: req.headers.map((h): [string, string] => [h.name, h.value]),
        body: kept,
        bodyTruncated: body.length > kept.length,
        sealedBody: kept.length > 0 ? await deps.sealer.seal(ref.endpointId, kept) : undefined,
        recordedTruncated: body.length > kept.length,
        outcome,
        capture: event,
        requestSha256: "",
        message: "",
      };
      deps.metrics?.attempt("cli", outcomeLabel(outcome), LISTEN_DESTINATION_ID);
      const before = event?.deliveries.find((d) => d.destinationId === LISTEN_DESTINATION_ID);
      const forward = await sender.record(listen, sent, { kind: "direct" }, before?.state);
      if (!forward) throw notFound("event");
      return { attempt: resultOf(sent, forward.state, LISTEN_DESTINATION_ID) };
    },

    async checkForwardTarget(req) {
      const vetted = await deps.egress.vet(req.url);
      if (vetted.ok) return { allowed: true, reason: "", category: "" };
      return { allowed: false, reason: vetted.reason, category: vetted.category ?? "" };
    },
  };
}
