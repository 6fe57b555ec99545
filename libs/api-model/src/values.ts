import type { BreakerSettings, DestinationInput, DestinationViewJson } from "./destinations.js";
/**
 * The closed value sets of /v1, apart from the schemas that use them, so that a client that
 * needs only a list (a select's options) does not bundle the schemas.
 */
export const OPERATING_MODES = ["capture", "metadata_only", "relay", "proxy"] as const;
/** The modes that forward, and so need the endpoint's `forward` settings (design §11). */
export const FORWARDING_MODES = ["relay", "proxy"] as const;
export const isForwardingMode = (operatingMode: string): boolean => (FORWARDING_MODES as readonly string[]).includes(operatingMode);
export const ENDPOINT_STATUSES = ["active", "paused"] as const;
export const ENDPOINT_SOURCES = ["api", "dashboard"] as const;
export const SLUG_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;

export const DECRYPTIONS = ["ok", "failed", "metadata_only"] as const;
export type Decryption = (typeof DECRYPTIONS)[number];
export const VERIFICATIONS = ["verified", "failed", "unverified"] as const;
export const BODY_ENCODINGS = ["utf8", "base64"] as const;

export const REPLAY_MODES = ["exact", "resign"] as const;
export const REPLAY_RESULTS = ["delivered", "rejected", "network_error"] as const;
/** The export's media type: one event detail (operation 6's JSON) per line. Here, with the
 * values, so that the client (and the page that bundles it) needs no schema module. */
export const NDJSON_MEDIA_TYPE = "application/x-ndjson";

/** The quotas a 429 `quota_exceeded` names in `details.quota` (docs/api.md, "Quotas"). */
export const QUOTA_NAMES = ["endpoints", "keys", "api_rate", "waits", "listeners", "alert_channels"] as const;
export type QuotaName = (typeof QUOTA_NAMES)[number];
/** `GET /v1/endpoints`: the page size when none is given, and the largest one. */
export const ENDPOINT_PAGE_DEFAULT = 100;
export const ENDPOINT_PAGE_MAX = 500;

/** `validation_failed`'s details.reason; `loop`: a destination that is one of the deployment's own webhook URLs (design §14). */
export const FIELD_REASONS = [
  "required",
  "type",
  "pattern",
  "length",
  "range",
  "format",
  "unknown",
  "immutable",
  "loop",
  // Routing (design §17): what this endpoint cannot take (a proxy's filter), an operator a
  // destination filter may not use, a destination name given twice (ADR 0080).
  "unsupported",
  "unsupported_operator",
  "duplicate",
] as const;
/** `target_not_allowed`'s details.reason (design §14): what of the target the egress guard refused. */
export const TARGET_REFUSAL_REASONS = ["private_address", "loopback", "link_local", "metadata", "scheme", "credentials", "port"] as const;
export type TargetRefusalReason = (typeof TARGET_REFUSAL_REASONS)[number];
/** Every forwarded request carries it (design §14): 1 on a first forward, the captured request's hop + 1 after that. */
export const HOP_HEADER = "X-Whc-Hop";
/** The hop a forward of a capture carries: its own hop header's value (0 without one) plus one. */
export function nextHop(headers: readonly (readonly [string, string])[]): number {
  const captured = headers.find(([name]) => name.toLowerCase() === "x-whc-hop")?.[1];
  const n = captured !== undefined && /^\d{1,6}$/.test(captured.trim()) ? Number(captured.trim()) : 0;
  return n + 1;
}
export const HEALTH_CHECKS = ["ok", "down"] as const;

/**
 * Why `POST /v1/endpoints/{id}/trigger` cannot send a sample (`trigger_unavailable`): the
 * provider has none (generic), the endpoint's secret only verifies (a Discord or SendGrid public
 * key), or ingest answered without storing it (paused, refused).
 */
export const TRIGGER_UNAVAILABLE_CAUSES = ["no_samples", "public_key_secret", "not_captured"] as const;
export type TriggerUnavailableCause = (typeof TRIGGER_UNAVAILABLE_CAUSES)[number];

/** The diagnostic of an event (design §12): the lists a client maps to words. */
export const LIKELY_CAUSES = [
  "none",
  "header_missing",
  "header_malformed",
  "wrong_scheme",
  "stale_timestamp",
  "future_timestamp",
  "wrong_secret",
  "secret_format",
  "body_reserialized",
  "body_newline_changed",
  "url_mismatch",
] as const;
export type LikelyCause = (typeof LIKELY_CAUSES)[number];
/** Why a capture got the answer it got (design §10, §11): `diagnostic.responseSource`. */
export const RESPONSE_SOURCES = ["default", "rule", "sequence", "handshake", "proxy", "forward_failed"] as const;
export type ResponseSource = (typeof RESPONSE_SOURCES)[number];
/** Which secret verified a signature: after a rotation the previous one may, for a grace period. */
export const MATCHED_SECRETS = ["current", "previous", "none"] as const;
export type MatchedSecret = (typeof MATCHED_SECRETS)[number];
export const CHECK_NAMES = ["header_present", "header_well_formed", "signature_matches", "timestamp_fresh"] as const;
export type CheckName = (typeof CHECK_NAMES)[number];
export const BODY_KINDS = ["json", "form", "text", "binary", "empty"] as const;
export type BodyIs = (typeof BODY_KINDS)[number];
/** The providers' verification handshakes an endpoint answers (design §10). */
export const HANDSHAKE_NAMES = [
  "slack_url_verification",
  "zoom_url_validation",
  "asana_hook_secret",
  "meta_verify_token",
  "x_crc",
  "graph_validation_token",
  "dropbox_challenge",
] as const;
export type HandshakeName = (typeof HANDSHAKE_NAMES)[number];

/**
 * Forwarding (design §11; the words are ADR 0014's): a delivery is one event's way to its
 * destination, made of attempts. The one list of each; every layer derives its types from these.
 */
/** What a destination's settings default to (the /v1 schema's defaults; the dashboard's form starts from them). */
export const DESTINATION_DEFAULTS = { keepPath: true, timeoutMs: 10_000, maxAttempts: 6 } as const;
/**
 * A delivery's states (design §11, §17): `pending` (waiting in the outbox or in flight),
 * `held` (a destination's breaker or pause holds it, §18), `delivered` (2xx), `failed` (final:
 * another 4xx, or its transform failed), `exhausted` (out of attempts), `skipped` (its
 * transform answered null), `duplicate` (a duplicate capture, §17's deduplication).
 */
export const DELIVERY_STATES = ["pending", "held", "delivered", "failed", "exhausted", "skipped", "duplicate"] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];
/**
 * An event's forward state over its deliveries (design §17), the first that any of them is:
 * pending or held makes it `pending`; then exhausted, failed, delivered, skipped, duplicate.
 * Undefined without deliveries (never forwarded).
 */
export function aggregateDeliveryState(states: readonly DeliveryState[]): DeliveryState | undefined {
  if (states.length === 0) return undefined;
  if (states.includes("pending") || states.includes("held")) return "pending";
  for (const s of AGGREGATE_ORDER) if (states.includes(s)) return s;
  return states[0];
}
/** After pending (or held): which state an event's several deliveries show, first match wins. */
export const AGGREGATE_ORDER = ["exhausted", "failed", "delivered", "skipped", "duplicate"] as const satisfies readonly DeliveryState[];
/** What started an attempt: the outbox's first and later tries, redeliver, `whc listen`, or a bulk redelivery (design §18). */
export const ATTEMPT_TRIGGERS = ["initial", "retry", "manual", "cli", "bulk"] as const;
export type AttemptTrigger = (typeof ATTEMPT_TRIGGERS)[number];
/** Why an attempt got no answer: replay's network failures plus the guard's and the leases'. */
export const ATTEMPT_ERRORS = [
  "dns_failure",
  "connection_refused",
  "connection_reset",
  "timeout",
  "tls_error",
  "too_many_redirects",
  "host_unreachable",
  "protocol_error",
  "target_not_allowed",
  "egress_capacity_exhausted",
  // The claims before this one were taken and never recorded (their sender stopped mid-send):
  // with maxAttempts spent that way, the delivery is exhausted without sending again.
  "interrupted",
  // The destination's transform threw, ran out of time or memory, or returned no request (design §17).
  "transform_failed",
] as const;
export type AttemptError = (typeof ATTEMPT_ERRORS)[number];
/** Headers that describe one connection, never passed on (RFC 9110 §7.6.1). */
export const HOP_BY_HOP_HEADERS = ["connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection"] as const;
/**
 * A capture's headers that replay, forwards and `whc listen` never send on: the hop-by-hop
 * ones, those the new request computes itself, and those that described the capture's own hop
 * (its proxies) rather than the request.
 */
export const NOT_SENT_ON_HEADERS = [
  ...HOP_BY_HOP_HEADERS,
  "content-length",
  "host",
  "proxy-authorization",
  "expect",
  "x-forwarded-for",
  "x-forwarded-host",
  "x-forwarded-proto",
  "x-real-ip",
  "forwarded",
  // The hop count of the capture's own arrival: a forward sends its own (nextHop).
  "x-whc-hop",
] as const;
/** The header of every forwarded request: the event id, and the attempt number. */
export const DELIVERY_ID_HEADER = "X-Whc-Delivery-Id";
export const ATTEMPT_HEADER = "X-Whc-Attempt";

/**
 * Alert channels (design §18; ADRs 0085, 0086): the interface's "notifications sent by the
 * service to the caller". A channel is a webhook (signed as Standard Webhooks) or a Slack
 * incoming webhook that is told about the events it names, for every endpoint of the account
 * or only some.
 */
export const ALERT_EVENTS = [
  "destination.opened",
  "destination.closed",
  "delivery.exhausted",
  "delivery.failed",
  "signature.failed",
  "schema.drift",
  "listener.stalled",
  "test",
] as const;

export type AlertEvent = (typeof ALERT_EVENTS)[number];

export const ALERT_CHANNEL_TYPES = ["webhook", "slack"] as const;

export type AlertChannelType = (typeof ALERT_CHANNEL_TYPES)[number];

/**
 * The audit log (design §15; ADR 0053): who did what to which endpoint or event, newest first.
 * The actions the deployment records today; §15 also names config.applied, which comes with
 * `whc apply`.
 */
export const AUDIT_ACTIONS = [
  "endpoint.created",
  "endpoint.updated",
  "endpoint.deleted",
  "event.read",
  "event.deleted",
  "event.curl_exported",
  "events.exported",
  "event.replayed",
  "event.redelivered",
  "redelivery.started",
  "redelivery.canceled",
  "event.triggered",
  "key.created",
  "key.revoked",
  "alert_channel.created",
  "alert_channel.deleted",
  "config.applied",
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** The longest window: as long as events are kept by default (WHC_RETENTION_DAYS, 30). */
export const MAX_DEDUPE_WINDOW_SECONDS = 30 * 86_400;

export const MAX_DEDUPE_FIELDS = 5;

export const MAX_DESTINATIONS = 10;

/** A destination without `breaker` settings has these. */
export const BREAKER_DEFAULTS = { failures: 5, probeAfterMs: 30_000 } as const;

/**
 * A breaker's settings as given again (a PATCH, a file): its failures and probe delay, without
 * its state; undefined when they are the defaults (a destination has them without being told).
 */
export function breakerSettingsOf(b: { failures: number; probeAfterMs: number } | undefined): BreakerSettings | undefined {
  if (!b || (b.failures === BREAKER_DEFAULTS.failures && b.probeAfterMs === BREAKER_DEFAULTS.probeAfterMs)) return undefined;
  return { failures: b.failures, probeAfterMs: b.probeAfterMs };
}

/**
 * API keys over /v1 (design §15; ADR 0050): what a key may do (its scopes) and on which
 * endpoints (all of the account's, or only its `endpointIds`).
 */
export const SCOPES = [
  "endpoints:read",
  "endpoints:write",
  "events:read",
  "events:write",
  "events:replay",
  "keys:write",
  "audit:read",
  "alerts:write",
  "dashboard",
  "*",
] as const;

export type Scope = (typeof SCOPES)[number];

/** How often `whc listen` heartbeats, and how long after its last one a listener is gone (WHC_LISTENER_TTL_S). */
export const LISTENER_HEARTBEAT_S = 10;

export const SCHEMA_LIMITS = {
  /** Paths one event type's schema holds; a path first seen after that is not learned (nor reported `added`). */
  pathsPerType: 500,
  /** Event types learned per endpoint; captures of a type first seen after that are not learned. */
  typesPerEndpoint: 100,
  /** Samples of a type before its captures are judged. */
  samplesBeforeDrift: 20,
  /** A path present in at least this share of the samples is expected: its absence is `missing`. */
  expectedRatio: 0.99,
  /** Changes kept on one event's `schemaDrift`. */
  changesPerEvent: 50,
  /** Bodies larger than this are not learned (their shape is never read). */
  bodyBytes: 256 * 1024,
  /** Deeper values are not looked into: their path has its type, its children are not learned. */
  depth: 32,
  /** Values looked at in one body; past it the shape is partial (learned, but nothing is reported `missing`). */
  values: 20_000,
  /** Elements of one array looked at; past it the shape is partial. */
  arrayItems: 200,
  /** A longer path is not learned; the shape is partial. */
  pathLength: 300,
} as const;

/**
 * A stored destination as a PATCH sends it back (design §17): its settings under its id, its
 * target secret left out (so kept), its breaker's settings and not its state (design §18), the
 * defaults not sent. What whc and the dashboard send for the destinations they leave as they are.
 */
export function keptDestination(d: DestinationViewJson): DestinationInput {
  const breaker = breakerSettingsOf(d.breaker);
  return {
    id: d.id,
    name: d.name,
    url: d.url,
    keepPath: d.keepPath,
    timeoutMs: d.timeoutMs,
    maxAttempts: d.maxAttempts,
    ...(d.filter ? { filter: d.filter } : {}),
    ...(d.transform ? { transform: d.transform } : {}),
    ...(d.rateLimit ? { rateLimit: d.rateLimit } : {}),
    ...(breaker ? { breaker } : {}),
    paused: d.paused,
  };
}
