import type { Client } from "@connectrpc/connect";
import { createHash } from "node:crypto";
import type { AuditContext, CatalogService, CryptoService, Endpoint, Event, Forward } from "@whc/contracts";
import { ATTEMPT_HEADER, DELIVERY_ID_HEADER, targetUrl, type AttemptTrigger, type DestinationSettings, type StoredDestination } from "@whc/api-model";
import { destinationsOf } from "@whc/api-model/present";
import type { EgressGuard, SendResult } from "@whc/egress-guard";
import { AppError, validationFailed } from "@whc/errors";
import type { Logger } from "@whc/logging";
import type { AttemptTransition, DeliveryRef, EgressLease, EgressLeases, EventRef } from "@whc/ports";
import { openCapture, sealUrlFor, type EnvelopeOpener, type EnvelopeSealer, type SealedBodyParts } from "@whc/sealing";
import { outboundHeaders } from "./outbound.js";
import { prepareRequest, type OutgoingRequest, type TransformRunner } from "./transform.js";
import { errorOf, isFinal, outcomeLabel, parseRetryAfter, type AttemptOutcome } from "./forward-policy.js";
import type { ForwardMetrics } from "./forward-metrics.js";

/** A recorded attempt keeps at most this much of the answer's body (design §11). */
export const RECORDED_BODY_BYTES = 64 * 1024;

/** What forwarding needs besides what replay needs. */
export interface ForwardDeps {
  catalog: Client<typeof CatalogService>;
  /** Opens the endpoints' sealed target secrets. */
  crypto: Client<typeof CryptoService>;
  opener: EnvelopeOpener;
  /** Seals the answers' bodies at rest, as ingest seals request bodies. */
  sealer: EnvelopeSealer;
  leases: EgressLeases;
  logger: Logger;
  metrics?: ForwardMetrics | undefined;
  /** The one way out (vetting, internal services refused, sending): replay's and every forward's. */
  egress: EgressGuard;
  /** Runs destinations' transforms (design §17); without it a destination with one fails its deliveries. */
  transforms?: TransformRunner | undefined;
  now?: () => number;
}

export interface ForwardOptions {
  /** Connect (+TLS) deadline; the whole attempt's is the endpoint's timeoutMs. */
  connectTimeoutMs: number;
}

/** A delivery ready for an attempt: its event opened, its destination's settings and secret at hand. */
export interface OpenedDelivery {
  ref: DeliveryRef;
  endpoint: Endpoint;
  /** The stored event with its headers, sub-path and query opened (ADR 0009). */
  event: Event;
  /** The destination as the endpoint holds it now (design §17): its name, filter, transform. */
  destination: StoredDestination;
  settings: DestinationSettings;
  /** The event's delivery to this destination as stored; undefined before its first attempt. */
  delivery: Forward | undefined;
  /** Where this event goes: the destination with the capture's sub-path and query when keepPath. */
  target: string;
  /** The stored body in clear; undefined when none is stored. */
  body: Uint8Array | undefined;
  /** False when a stored body or the request's headers could not be opened: it cannot be sent exactly. */
  bodyReadable: boolean;
  targetSecret: Uint8Array | undefined;
}

export type Loaded =
  | { kind: "ready"; delivery: OpenedDelivery }
  /** The endpoint has no such destination (any more); `delivery` is the event's to it, if any. */
  | { kind: "not_configured"; event: Event; delivery: Forward | undefined }
  | { kind: "missing" };

/** One attempt as made, ready to be recorded; `body` is the answer in clear up to what was asked. */
export interface SentAttempt {
  n: number;
  trigger: AttemptTrigger;
  at: number;
  url: string;
  durationMs: number;
  status: number;
  headers: [string, string][];
  body: Buffer;
  bodyTruncated: boolean;
  /** The first RECORDED_BODY_BYTES, sealed; undefined when empty or when sealing failed. */
  sealedBody: SealedBodyParts | undefined;
  recordedTruncated: boolean;
  outcome: AttemptOutcome;
  /** Hex SHA-256 of the body sent; "" when nothing was sent. */
  requestSha256: string;
  /** Words for the outcome (a transform's failure); "" otherwise. */
  message: string;
  /**
   * The event whose data key seals `url` in the record (it may carry the capture's sub-path
   * and query, ADR 0009); undefined: `url` is recorded as it is (already sealed, or no capture's).
   */
  capture?: Event | undefined;
}

/** The transition as RecordForwardAttempt carries it: an empty state is a direct attempt. */
function transitionFields(t: AttemptTransition) {
  if (t.kind === "direct") return { state: "", claimOwner: "" };
  return { state: t.state, claimOwner: t.owner, ...(t.nextAttemptAt !== undefined ? { nextAttemptAtMs: BigInt(t.nextAttemptAt) } : {}) };
}

function isNotFound(err: unknown): boolean {
  return AppError.is(err) && err.reason === "not_found";
}

/**
 * The destination's target secret in clear (design §17): its entry of the endpoint's sealed
 * secrets, or, for an endpoint saved before destinations, its one sealed target secret.
 */
async function targetSecretOf(deps: ForwardDeps, endpoint: Endpoint, destination: StoredDestination): Promise<Uint8Array | undefined> {
  if (!destination.targetSecretSet) return undefined;
  if (endpoint.sealedDestinationSecrets.length > 0) {
    const { plaintext } = await deps.crypto.openSecret({ sealed: endpoint.sealedDestinationSecrets });
    const secret = (JSON.parse(Buffer.from(plaintext).toString("utf8")) as Record<string, string>)[destination.id];
    return secret === undefined ? undefined : Buffer.from(secret, "utf8");
  }
  if (endpoint.sealedTargetSecret.length > 0) return (await deps.crypto.openSecret({ sealed: endpoint.sealedTargetSecret })).plaintext;
  return undefined;
}

/**
 * The event (headers, sub-path and query in clear), the destination's settings (as the
 * endpoint holds them now), target secret and body in clear: one catalog call (LoadDelivery),
 * then crypto's for a target secret and a data key not yet cached.
 */
async function loadDelivery(deps: ForwardDeps, given: EventRef & { destinationId?: string | undefined }): Promise<Loaded> {
  let endpoint: Endpoint | undefined;
  let stored: Event | undefined;
  try {
    ({ endpoint, event: stored } = await deps.catalog.loadDelivery({ accountId: given.accountId, endpointId: given.endpointId, eventId: given.eventId }));
  } catch (err) {
    if (isNotFound(err)) return { kind: "missing" };
    throw err;
  }
  if (!endpoint || !stored) return { kind: "missing" };
  const destinations = destinationsOf(endpoint);
  const ref: DeliveryRef = { ...given, destinationId: given.destinationId || defaultDestinationOf(stored, destinations) };
  const destination = destinations.find((d) => d.id === ref.destinationId);
  const storedDelivery = stored.deliveries.find((d) => d.destinationId === ref.destinationId);
  if (!destination) return { kind: "not_configured", event: stored, delivery: storedDelivery };

  const settings: DestinationSettings = { url: destination.url, keepPath: destination.keepPath, timeoutMs: destination.timeoutMs, maxAttempts: destination.maxAttempts };
  const [targetSecret, { event, body, decryption, requestReadable }] = await Promise.all([targetSecretOf(deps, endpoint, destination), openCapture(deps.opener, stored)]);
  const bodyReadable = decryption !== "failed" && requestReadable;
  const delivery: OpenedDelivery = {
    ref,
    endpoint,
    event,
    destination,
    settings,
    delivery: event.deliveries.find((d) => d.destinationId === ref.destinationId),
    target: targetUrl(settings, event.path),
    body,
    bodyReadable,
    targetSecret,
  };
  return { kind: "ready", delivery };
}

/**
 * The destination a direct attempt goes to when none is named (redeliver without
 * destinationId, proxy): the event's one delivery's; with none yet, the endpoint's first
 * destination; with several, the caller must name one.
 */
function defaultDestinationOf(event: Event, destinations: readonly StoredDestination[]): string {
  if (event.deliveries.length > 1) throw validationFailed("destination_id", "required", "the event has several deliveries: name the destination");
  return event.deliveries[0]?.destinationId ?? destinations[0]?.id ?? "";
}

/** Hex SHA-256 of a request body sent (the attempt's requestSha256). */
export function requestSha256(body: Uint8Array | undefined): string {
  return createHash("sha256")
    .update(body ?? new Uint8Array())
    .digest("hex");
}

/**
 * The headers of attempt n: the request's end-to-end ones (re-signed with a target secret over
 * the bytes sent, transformed or not), then ours.
 */
function headersOf(d: OpenedDelivery, request: OutgoingRequest, n: number, nowMs: number): [string, string][] {
  const ours = new Set([DELIVERY_ID_HEADER.toLowerCase(), ATTEMPT_HEADER.toLowerCase()]);
  const captured = request.headers.filter((h) => !ours.has(h.name.toLowerCase()));
  const headers = outboundHeaders(
    captured,
    d.event.provider,
    request.body,
    d.targetSecret
      ? {
          secret: d.targetSecret,
          url: request.target,
          nowMs,
          genericSignatureHeader: d.endpoint.genericSignatureHeader,
          genericSignaturePrefix: d.endpoint.genericSignaturePrefix,
        }
      : undefined,
  );
  headers.push([DELIVERY_ID_HEADER, d.event.id], [ATTEMPT_HEADER, String(n)]);
  return headers;
}

/**
 * The one way a forward attempt is made, by the outbox worker and by the ForwardEvent RPC:
 * load the event and its endpoint's destination, vet the URL (at every send: DNS may have
 * changed), hold an egress lease on the origin, send the stored bytes with the captured
 * end-to-end headers plus the delivery id and attempt number (re-signed with the target
 * secret when one is set), and keep the answer's first 64 KiB sealed.
 */
export function createAttemptSender(deps: ForwardDeps, options: ForwardOptions) {
  const now = deps.now ?? Date.now;
  const { catalog, logger } = deps;

  /** Sealing the excerpt must not lose an attempt that was made: without crypto, the record keeps no body. */
  async function sealExcerpt(endpointId: string, excerpt: Buffer): Promise<SealedBodyParts | undefined> {
    if (excerpt.length === 0) return undefined;
    try {
      return await deps.sealer.seal(endpointId, excerpt);
    } catch (err) {
      logger.warn({ err, endpointId }, "forward answer not sealed; the attempt is recorded without its body");
      return undefined;
    }
  }

  function unsent(attempt: { n: number; trigger: AttemptTrigger; at: number; url: string; capture?: Event }, outcome: AttemptOutcome, durationMs = 0, sha = ""): SentAttempt {
    return {
      ...attempt,
      durationMs,
      status: 0,
      headers: [],
      body: Buffer.alloc(0),
      bodyTruncated: false,
      sealedBody: undefined,
      recordedTruncated: false,
      outcome,
      requestSha256: sha,
      message: outcome.kind === "transform_failed" ? outcome.message : "",
    };
  }

  async function made(
    d: OpenedDelivery,
    base: { n: number; trigger: AttemptTrigger; at: number },
    result: SendResult | { kind: "not_sent"; outcome: AttemptOutcome },
    maxResponseBytes: number,
    request?: OutgoingRequest,
  ): Promise<SentAttempt> {
    const attempt = { ...base, url: request?.target ?? d.target, capture: d.event };
    if (result.kind === "not_sent") return unsent(attempt, result.outcome);
    // Sent (the request may have reached the destination): the digest of its bytes is recorded.
    const sha = requestSha256(request?.body ?? d.body);
    if (result.kind === "network_error") return unsent(attempt, { kind: "network_error", reason: result.reason }, result.durationMs, sha);
    const kept = result.excerpt.subarray(0, RECORDED_BODY_BYTES);
    return {
      ...attempt,
      durationMs: result.durationMs,
      status: result.status,
      headers: result.rawHeaders,
      body: result.excerpt.subarray(0, maxResponseBytes),
      bodyTruncated: result.excerptTruncated || result.excerpt.length > maxResponseBytes,
      sealedBody: await sealExcerpt(d.ref.endpointId, kept),
      recordedTruncated: result.excerptTruncated || result.excerpt.length > RECORDED_BODY_BYTES,
      outcome: { kind: "response", status: result.status, retryAfterMs: parseRetryAfter(result.headers["retry-after"], now()) },
      requestSha256: sha,
      message: "",
    };
  }

  async function attemptOnce(
    d: OpenedDelivery,
    base: { n: number; trigger: AttemptTrigger; at: number },
    maxResponseBytes: number,
    acquire: (origin: string) => Promise<EgressLease | undefined>,
    notBefore = 0,
  ): Promise<SentAttempt> {
    const notSent = (outcome: AttemptOutcome) => made(d, base, { kind: "not_sent", outcome }, maxResponseBytes);
    if (!d.bodyReadable) return notSent({ kind: "unsendable" });
    // The transform first (design §17): it decides what goes, and whether anything does.
    const prepared = await prepareRequest(deps.transforms, d, now());
    if (prepared.kind === "skipped") return notSent({ kind: "skipped" });
    if (prepared.kind === "failed") return notSent({ kind: "transform_failed", message: prepared.message });
    const { request } = prepared;
    const vetted = await deps.egress.vet(request.target);
    if (!vetted.ok) {
      return notSent(vetted.reason === "dns_failure" ? { kind: "network_error", reason: "dns_failure" } : { kind: "refused", reason: "target_not_allowed" });
    }
    const lease = await acquire(vetted.target.url.origin);
    if (!lease) return notSent({ kind: "refused", reason: "egress_capacity_exhausted" });
    try {
      // Ready early: the send keeps its turn (a rate-limited destination's, ADR 0087).
      if (notBefore > now()) await new Promise((resolve) => setTimeout(resolve, notBefore - now()));
      base.at = now();
      const result = await deps.egress.send({
        target: vetted.target,
        address: vetted.address,
        family: vetted.family,
        method: request.method,
        headers: headersOf(d, request, base.n, now()),
        body: request.body,
        connectTimeoutMs: Math.min(options.connectTimeoutMs, d.settings.timeoutMs),
        totalTimeoutMs: d.settings.timeoutMs,
        maxExcerptBytes: Math.max(RECORDED_BODY_BYTES, maxResponseBytes),
      });
      return await made(d, base, result, maxResponseBytes, request);
    } finally {
      await lease.release().catch((err: unknown) => logger.warn({ err }, "egress lease not released"));
    }
  }

  /**
   * Attempt n to the destination. `acquire` takes the egress lease (the worker waits its
   * turn; direct attempts take one now or none). Never throws for what the destination or
   * the guard did: that is the attempt's outcome.
   */
  async function send(
    d: OpenedDelivery,
    n: number,
    trigger: AttemptTrigger,
    extra: { maxResponseBytes?: number; acquire?: (origin: string) => Promise<EgressLease | undefined>; notBefore?: number } = {},
  ): Promise<SentAttempt> {
    const acquire = extra.acquire ?? ((origin: string) => deps.leases.acquire(origin));
    const sent = await attemptOnce(d, { n, trigger, at: now() }, extra.maxResponseBytes ?? RECORDED_BODY_BYTES, acquire, extra.notBefore);
    deps.metrics?.attempt(trigger, outcomeLabel(sent.outcome), d.ref.destinationId);
    return sent;
  }

  /**
   * An attempt that could not be made at all (the endpoint lost its forward settings, its
   * attempts were spent): counted, not sent. With `capture`, `url` is recorded sealed under its key.
   */
  function refused(n: number, trigger: AttemptTrigger, url: string, outcome: AttemptOutcome, destinationId: string, capture?: Event): SentAttempt {
    deps.metrics?.attempt(trigger, outcomeLabel(outcome), destinationId);
    return unsent({ n, trigger, at: now(), url, ...(capture ? { capture } : {}) }, outcome);
  }

  /**
   * Records the attempt and moves the delivery as `transition` says (a direct attempt, or the
   * worker's verdict under its claim). Counts a delivery that became final.
   * Undefined when the event no longer exists.
   */
  async function record(ref: DeliveryRef, sent: SentAttempt, transition: AttemptTransition, before: string | undefined, audit?: AuditContext): Promise<Forward | undefined> {
    const res = await catalog.recordForwardAttempt({
      ...(audit ? { audit } : {}),
      ...ref,
      attempt: {
        n: sent.n,
        trigger: sent.trigger,
        atMs: BigInt(sent.at),
        url: sent.capture ? await sealUrlFor(deps.opener, sent.capture, sent.url) : sent.url,
        durationMs: BigInt(Math.round(sent.durationMs)),
        status: sent.status,
        headers: sent.headers.map(([name, value]) => ({ name, value })),
        ...(sent.sealedBody ? { body: sent.sealedBody } : {}),
        bodyTruncated: sent.recordedTruncated,
        error: errorOf(sent.outcome),
        requestSha256: sent.requestSha256,
        message: sent.message,
      },
      ...transitionFields(transition),
    });
    if (!res.recorded || !res.forward) return undefined;
    // A worker whose claim was lost did not move the delivery: the one that did counts it.
    const moved = transition.kind === "direct" ? res.forward.state !== before : res.forward.state === transition.state;
    if (moved && isFinal(res.forward.state)) deps.metrics?.finished(res.forward.state, ref.destinationId);
    return res.forward;
  }

  return { load: (ref: EventRef & { destinationId?: string | undefined }) => loadDelivery(deps, ref), send, refused, record };
}
