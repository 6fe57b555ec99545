import { z } from "zod";
import type { CapturedEvent, DestinationBreaker, Endpoint, Event, Forward, Header } from "@whc/contracts";
import {
  BREAKER_DEFAULTS,
  LISTEN_DESTINATION_ID,
  LISTEN_DESTINATION_NAME,
  aggregateDeliveryState,
  defaultDestinationName,
  endpointResponseConfig,
  destinationSettings,
  storedDestination,
  type DeliveryJson,
  type DeliveryState,
  type BreakerViewJson,
  type DestinationViewJson,
  type StoredDestination,
  redactSettings,
  dedupeSettingsOf,
  redactionCountsOf,
  schemaDrift,
  storedJsonOf,
  type DestinationSettings,
  type Decryption,
  type EndpointJson,
  type EndpointResponseConfig,
  type EventDetailJson,
  type EventSummaryJson,
  type ForwardAttemptJson,
  type ForwardedResponseJson,
  type ForwardViewJson,
  inboundView,
  type InboundViewJson,
} from "../index.js";

/** Internal records (protobuf) as the /v1 shapes: what the gateway answers and NATS carries. */

export function isoTime(ms: number | bigint): string {
  return new Date(Number(ms)).toISOString();
}

export function webhookUrlOf(ingestPublicUrl: string, endpointId: string): string {
  return `${ingestPublicUrl}/h/${endpointId}`;
}

export function endpointJson(e: Endpoint, ingestPublicUrl: string): EndpointJson {
  return {
    id: e.id,
    slug: e.slug,
    displayName: e.displayName,
    webhookUrl: webhookUrlOf(ingestPublicUrl, e.id),
    operatingMode: e.operatingMode as EndpointJson["operatingMode"],
    status: e.status as EndpointJson["status"],
    replayFromDashboard: e.replayFromDashboard,
    replayFromApi: e.replayFromApi,
    provider: e.provider,
    secretSet: e.secretSet,
    ...(e.genericSignatureHeader ? { genericSignatureHeader: e.genericSignatureHeader } : {}),
    ...(e.genericSignaturePrefix ? { genericSignaturePrefix: e.genericSignaturePrefix } : {}),
    source: e.source,
    createdAt: isoTime(e.createdAtMs),
    updatedAt: isoTime(e.updatedAtMs),
    eventCount: Number(e.eventCount),
    ...(e.lastEventAtMs !== undefined ? { lastEventAt: isoTime(e.lastEventAtMs) } : {}),
    ...(e.lastPurgedAtMs !== undefined ? { lastPurgedAt: isoTime(e.lastPurgedAtMs) } : {}),
    purgedEventCount: Number(e.purgedEventCount),
    ...(e.secretRotatedAtMs !== undefined ? { secretRotatedAt: isoTime(e.secretRotatedAtMs) } : {}),
    ...(e.responseJson ? { response: responseConfigOf(e.responseJson) } : {}),
    ...destinationFieldsOf(e),
    ...(e.inboundJson ? { inbound: inboundViewOfJson(e.inboundJson) } : {}),
    rejectedCount: Number(e.rejectedCount),
    ...(e.redactJson ? { redact: storedJsonOf(redactSettings, e.redactJson) } : {}),
    ...dedupeFieldOf(e.dedupeJson),
  };
}

/** The Endpoint's `dedupe`: the stored settings, left out when none (or unreadable). */
function dedupeFieldOf(json: string): Pick<EndpointJson, "dedupe"> {
  const dedupe = dedupeSettingsOf(json);
  return dedupe ? { dedupe } : {};
}

/** The stored inbound view (inbound_json, written by the gateway from a validated request). */
export function inboundViewOfJson(json: string): InboundViewJson | undefined {
  try {
    const parsed = inboundView.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Unknown keys are ignored: settings written by a newer version still read. */
const legacyDestination = z.object(destinationSettings.shape);

/**
 * A destination's settings as the catalog stores them (`forward_json`); they were validated
 * when saved, so a bad one reads as none.
 */
export function destinationSettingsOf(json: string): DestinationSettings | undefined {
  return storedJsonOf(legacyDestination, json);
}

const storedDestinations = z.array(storedDestination);

/**
 * An endpoint's destinations as stored (design §17): its forward_json's array, validated when
 * saved (a bad one reads as none). An endpoint saved before destinations holds one
 * destination's settings as an object: it reads as one destination, under the endpoint's own id
 * (the id its deliveries of that time were moved under, legacyDestinationId), its target secret
 * the endpoint's sealed_target_secret.
 */
export function destinationsOf(e: Pick<Endpoint, "id" | "forwardJson" | "targetSecretSet">): StoredDestination[] {
  const json = e.forwardJson.trimStart();
  if (!json) return [];
  if (json.startsWith("[")) return storedJsonOf(storedDestinations, json) ?? [];
  const settings = destinationSettingsOf(json);
  return settings ? [{ id: e.id, name: defaultDestinationName(0), ...settings, targetSecretSet: e.targetSecretSet, paused: false }] : [];
}

/**
 * A destination's breaker as the Endpoint shows it (design §18): its settings (defaults when none
 * were given) and its stored state (closed and holding nothing without one).
 */
export function breakerViewOf(d: StoredDestination, b: DestinationBreaker | undefined): BreakerViewJson {
  const state = (b?.state ?? "closed") as BreakerViewJson["state"];
  return {
    failures: d.breaker?.failures ?? BREAKER_DEFAULTS.failures,
    probeAfterMs: d.breaker?.probeAfterMs ?? BREAKER_DEFAULTS.probeAfterMs,
    state,
    since: b?.sinceMs !== undefined ? isoTime(b.sinceMs) : null,
    consecutiveFailures: b?.consecutiveFailures ?? 0,
    held: Number(b?.held ?? 0),
    // A paused destination is not probed.
    nextProbeAt: state === "open" && !d.paused && b?.nextProbeAtMs !== undefined ? isoTime(b.nextProbeAtMs) : null,
  };
}

/** One destination as the Endpoint shows it, with its breaker (Endpoint.breakers: when asked for). */
export function destinationViewOf(d: StoredDestination, breaker?: DestinationBreaker): DestinationViewJson {
  return {
    id: d.id,
    name: d.name,
    url: d.url,
    keepPath: d.keepPath,
    timeoutMs: d.timeoutMs,
    maxAttempts: d.maxAttempts,
    targetSecretSet: d.targetSecretSet,
    ...(d.filter ? { filter: d.filter } : {}),
    ...(d.transform ? { transform: d.transform } : {}),
    ...(d.rateLimit ? { rateLimit: d.rateLimit } : {}),
    breaker: breakerViewOf(d, breaker),
    paused: d.paused,
  };
}

/** Part two's `forward`: the first destination's settings (design §17). */
export function forwardViewOf(d: StoredDestination): ForwardViewJson {
  return { url: d.url, keepPath: d.keepPath, timeoutMs: d.timeoutMs, maxAttempts: d.maxAttempts, targetSecretSet: d.targetSecretSet };
}

function destinationFieldsOf(e: Endpoint): Pick<EndpointJson, "forward" | "destinations"> {
  const destinations = destinationsOf(e);
  const [first] = destinations;
  if (!first) return {};
  return { forward: forwardViewOf(first), destinations: destinations.map((d) => destinationViewOf(d, e.breakers.find((b) => b.destinationId === d.id))) };
}

/** The names of an endpoint's destinations by id, as deliveries show them; whc listen's is its own. */
export function destinationNamesOf(e: Pick<Endpoint, "id" | "forwardJson" | "targetSecretSet"> | undefined): Map<string, string> {
  const names = new Map((e ? destinationsOf(e) : []).map((d) => [d.id, d.name]));
  names.set(LISTEN_DESTINATION_ID, LISTEN_DESTINATION_NAME);
  return names;
}

/** The stored response configuration; it was validated when saved, so a bad one reads as none. */
export function responseConfigOf(json: string): EndpointResponseConfig | undefined {
  return storedJsonOf(endpointResponseConfig, json);
}

/**
 * The summary of a stored event. `decryption` is `metadata_only` without a body; otherwise
 * `ok`, unless the caller knows the body's master key has left the ring (`failed`).
 */
export function eventSummaryJson(e: Event, options: { knownKeyIds?: ReadonlySet<string>; search?: boolean } = {}): EventSummaryJson {
  let decryption: Decryption = "ok";
  if (!e.bodyStored) decryption = "metadata_only";
  else if (options.knownKeyIds && e.body?.keyId && !options.knownKeyIds.has(e.body.keyId)) decryption = "failed";
  return {
    id: e.id,
    endpointId: e.endpointId,
    receivedAt: isoTime(e.receivedAtMs),
    method: e.method,
    ...(e.canonicalEventType ? { canonicalEventType: e.canonicalEventType } : {}),
    provider: e.provider,
    verification: e.verification,
    ...(e.verificationFailureReason ? { verificationFailureReason: e.verificationFailureReason } : {}),
    responseCode: e.responseCode,
    ...(e.readAtMs !== undefined ? { readAt: isoTime(e.readAtMs) } : {}),
    truncated: e.truncated,
    originalSizeBytes: Number(e.originalSizeBytes),
    decryption,
    ...(e.forward ? { forwardState: e.forward.state as EventSummaryJson["forwardState"] } : {}),
    ...(e.duplicateOf ? { duplicateOf: e.duplicateOf } : {}),
    ...(options.search ? { searchMatchedTruncated: e.truncated } : {}),
  };
}

/**
 * The summary of a capture just stored, as ingest notifies it (design §6): the same shape as
 * eventSummaryJson gives for the stored event, from the message ingest appended and the stamp
 * the catalog gave it. A capture is unread, and a forwarded one starts pending (a duplicate's
 * deliveries start, and stay, duplicate: design §17).
 */
export function capturedSummaryJson(c: CapturedEvent, stamp: { id: string; receivedAtMs: number; duplicateOf?: string | undefined }): EventSummaryJson {
  const duplicateOf = stamp.duplicateOf || undefined;
  return {
    id: stamp.id,
    endpointId: c.endpointId,
    receivedAt: isoTime(stamp.receivedAtMs),
    method: c.method,
    ...(c.canonicalEventType ? { canonicalEventType: c.canonicalEventType } : {}),
    provider: c.provider,
    verification: c.verification,
    ...(c.verificationFailureReason ? { verificationFailureReason: c.verificationFailureReason } : {}),
    responseCode: c.responseCode,
    truncated: c.truncated,
    originalSizeBytes: Number(c.originalSizeBytes),
    decryption: c.body === undefined ? "metadata_only" : "ok",
    ...(c.forwardTarget || c.deliveries.length > 0 ? { forwardState: duplicateOf ? "duplicate" : "pending" } : {}),
    ...(duplicateOf ? { duplicateOf } : {}),
  };
}

// ignoreBOM keeps a leading BOM in the text instead of silently dropping it.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Any character past ASCII: the value holds bytes that may be UTF-8. */
const NON_ASCII = /[\u0080-\u00ff]/;

/**
 * A header value as a reader expects to see it. Values are kept as sent, one character per
 * byte (how Node's parser hands them over, and what cURL export and replay send back); bytes
 * that form UTF-8 text, as senders mean them today, are shown decoded (`café`, not `cafÃ©`),
 * and any other bytes stay one character each.
 */
export function headerValueText(value: string): string {
  if (!NON_ASCII.test(value)) return value;
  try {
    return utf8.decode(Buffer.from(value, "latin1"));
  } catch {
    return value;
  }
}

/** Header pairs in arrival order become name -> values, names in order of first appearance. */
export function headersJson(headers: readonly { name: string; value: string }[]): Record<string, string[]> {
  const out: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  for (const { name, value } of headers) (out[name] ??= []).push(headerValueText(value));
  return { ...out };
}

function parseObject(text: string): Record<string, unknown> {
  if (!text) return {};
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * A stored diagnostic with its `bodySha256`: as stored, or, when ingest stored none (the body
 * stored is the bytes received), the opened body's. Without an opened body it stays absent.
 */
function withBodyHash(
  diagnostic: Record<string, unknown>,
  opened: { decryption: Decryption; plaintext?: Uint8Array | undefined; sha256?: ((plaintext: Uint8Array) => string) | undefined },
): Record<string, unknown> {
  if (typeof diagnostic.bodySha256 === "string" || !diagnostic.contentType) return diagnostic;
  if (opened.decryption !== "ok" || opened.plaintext === undefined || opened.sha256 === undefined) return diagnostic;
  return { bodySha256: opened.sha256(opened.plaintext), ...diagnostic };
}

/** UTF-8 text when the bytes decode as such, else base64: the body is always exact. */
export function bodyJson(bytes: Uint8Array): { body: string; bodyEncoding: "utf8" | "base64" } {
  try {
    return { body: utf8.decode(bytes), bodyEncoding: "utf8" };
  } catch {
    return { body: Buffer.from(bytes).toString("base64"), bodyEncoding: "base64" };
  }
}

/** What an attempt says, whether recorded by the catalog or just made by replay (the answer body apart). */
interface AttemptFields {
  n: number;
  trigger: string;
  atMs: bigint;
  url: string;
  durationMs: bigint;
  status: number;
  headers: readonly Header[];
  bodyTruncated: boolean;
  error: string;
  requestSha256: string;
  message: string;
}

/** One forward attempt; `body` is its answer excerpt in clear (undefined: none, or it could not be opened). */
export function forwardAttemptJson(a: AttemptFields, body: Uint8Array | undefined): ForwardAttemptJson {
  return {
    n: a.n,
    trigger: a.trigger as ForwardAttemptJson["trigger"],
    at: isoTime(a.atMs),
    url: a.url,
    durationMs: Number(a.durationMs),
    status: a.status === 0 ? null : a.status,
    headers: headersJson(a.headers),
    bodyBase64: body ? Buffer.from(body).toString("base64") : "",
    bodyTruncated: a.bodyTruncated,
    error: a.error === "" ? null : (a.error as NonNullable<ForwardAttemptJson["error"]>),
    requestSha256: a.requestSha256 || null,
    ...(a.message ? { message: a.message } : {}),
  };
}

/** One delivery of an event (design §17); `bodies[i]` is attempt i's answer excerpt opened. */
export function deliveryJson(f: Forward, name: string, bodies: readonly (Uint8Array | undefined)[] = []): DeliveryJson {
  return {
    destinationId: f.destinationId,
    name,
    state: f.state as DeliveryState,
    target: f.target,
    nextAttemptAt: f.nextAttemptAtMs === undefined ? null : isoTime(f.nextAttemptAtMs),
    attempts: f.attempts.map((a, i) => ({ ...forwardAttemptJson(a, bodies[i]), destinationId: f.destinationId })),
  };
}

/**
 * An event's `forwardedResponse`: `{}` when it was never forwarded. Part two's fields over
 * every delivery (design §17): the aggregate state, the first delivery's target, the earliest
 * next attempt, every attempt (oldest first, each with its destination); then the deliveries.
 * `bodies[d][i]` is delivery d's attempt i's answer excerpt opened (undefined: none, or it
 * could not be opened); `names` the endpoint's destination names by id.
 */
export function forwardedResponseJson(
  deliveries: readonly Forward[],
  bodies: readonly (readonly (Uint8Array | undefined)[])[] = [],
  names: ReadonlyMap<string, string> = new Map(),
): ForwardedResponseJson | Record<string, never> {
  const state = aggregateDeliveryState(deliveries.map((d) => d.state as DeliveryState));
  if (state === undefined) return {};
  const each = deliveries.map((d, i) => deliveryJson(d, names.get(d.destinationId) ?? "", bodies[i]));
  const due = each.flatMap((d) => (d.nextAttemptAt === null ? [] : [d.nextAttemptAt])).sort();
  const attempts = each.flatMap((d) => d.attempts).sort((a, b) => a.at.localeCompare(b.at) || a.n - b.n);
  return { state, target: each[0]?.target ?? "", nextAttemptAt: due[0] ?? null, attempts, deliveries: each };
}

export function eventDetailJson(
  e: Event,
  opened: {
    decryption: Decryption;
    plaintext?: Uint8Array | undefined;
    /** The attempts' answer excerpts opened, by delivery and attempt index. */
    attemptBodies?: readonly (readonly (Uint8Array | undefined)[])[] | undefined;
    /** The endpoint's destination names by id (destinationNamesOf). */
    destinationNames?: ReadonlyMap<string, string> | undefined;
    /**
     * Hex SHA-256 of the opened body: the diagnostic's `bodySha256` where ingest did not store
     * one, because the stored body is the bytes received (design §20). Called only then.
     */
    sha256?: ((plaintext: Uint8Array) => string) | undefined;
  },
): EventDetailJson {
  const { searchMatchedTruncated: _unused, ...summary } = eventSummaryJson(e);
  void _unused;
  const redactions = redactionCountsOf(e.redactionsJson);
  const drift = e.schemaDriftJson ? storedJsonOf(schemaDrift, e.schemaDriftJson) : undefined;
  return {
    ...summary,
    decryption: opened.decryption,
    path: e.path,
    headers: headersJson(e.headers),
    remoteIp: e.remoteIp,
    ...(opened.decryption === "ok" && opened.plaintext ? bodyJson(opened.plaintext) : {}),
    diagnostic: withBodyHash(parseObject(e.diagnosticJson), opened),
    ...(redactions ? { redactions } : {}),
    ...(drift?.length ? { schemaDrift: drift } : {}),
    forwardedResponse: forwardedResponseJson(e.deliveries, opened.attemptBodies, opened.destinationNames),
  };
}
