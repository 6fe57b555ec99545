/**
 * The closed value sets of /v1, apart from the schemas that use them, so that a client that
 * needs only a list (a select's options) does not bundle the schemas.
 */
export const OPERATING_MODES = ["capture", "metadata_only"] as const;
export const ENDPOINT_STATUSES = ["active", "paused"] as const;
export const ENDPOINT_SOURCES = ["api", "dashboard"] as const;
export const SLUG_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;

export const DECRYPTIONS = ["ok", "failed", "metadata_only"] as const;
export type Decryption = (typeof DECRYPTIONS)[number];
export const VERIFICATIONS = ["verified", "failed", "unverified"] as const;
export const BODY_ENCODINGS = ["utf8", "base64"] as const;

export const REPLAY_MODES = ["exact", "resign"] as const;
export const REPLAY_RESULTS = ["delivered", "rejected", "network_error"] as const;
/** The header a browser client sends so that `replayFromDashboard` applies instead of `replayFromApi`. */
export const CLIENT_HEADER = "X-Whc-Client";

export const FIELD_REASONS = ["required", "type", "pattern", "length", "range", "format", "unknown", "immutable"] as const;
export const HEALTH_CHECKS = ["ok", "down"] as const;
