import type Database from "better-sqlite3";

/**
 * The embedded catalog's schema. Events keep their small columns in `events` so that list
 * scans stay cheap; bodies and their search tokens live in `event_bodies`; the blind-index
 * postings live in `event_tokens`, clustered by (endpoint, token, commit sequence) so an AND
 * search walks one token's postings newest first and probes the others by primary key.
 * `events.seq` is the commit sequence: each append stamps its events from their endpoint's
 * last stamp inside its write transaction (ADR 0008), so within one endpoint seq order and
 * (received_at, id) order agree.
 *
 * Version 2: endpoints gained the response, the previous secret and the sequence counter.
 * Version 3: forwarding. Endpoints gained the forward settings and the target secret; events
 * their delivery (`forward_state` NULL: never forwarded), whose attempts live in
 * `forward_attempts` under the event's commit sequence. The relay outbox is the events whose
 * delivery is pending with a due time, found by the partial index `events_outbox`.
 * Version 4: endpoints keep their last stamp (`last_stamp_id`): catalogs stamp per endpoint.
 * Version 5: a capture's headers, sub-path and query are sealed (`event_bodies.sealed_request`,
 * under the body's data key: `wrapped_key` and `events.key_id` are set even without a body);
 * beside it `events.path` is '' and `event_bodies.headers` '[]'. Rows from before keep theirs
 * in clear and read as they did (ADR 0009).
 * Version 6: `listeners`, the running `whc listen`s heard from within their lifetime (design
 * §19, ADR 0062).
 * Version 7: redaction (design §16, ADR 0045). Endpoints gained their settings
 * (`redact_json`), event bodies the counts of what was replaced (`redactions`); '' is none.
 * Inbound protection too (design §16): endpoints gained `inbound_json`, its sealed secrets
 * (`sealed_inbound`) and `rejected_count`.
 * Version 8: API keys gained a name, scopes, endpoint restriction, expiry and last use (design
 * §15; keys from before hold every scope, `*`); `audit_log`, written in each audited action's
 * transaction (ADR 0053).
 * Version 9: alert channels (`alert_channels`) and the alert outbox (`alerts`, pending ones found
 * by the partial index `alerts_outbox`), design §18, ADRs 0085 and 0086.
 * Version 10: schemas and drift (design §19, ADR 0090). `event_schemas` holds what was learned
 * per endpoint and event type (paths, types, presence: no value); events gained `schema_drift`
 * (JSON, NULL when the capture did not drift or was not judged).
 * Version 11: routing (design §17, ADR 0080; built beside versions 9 and 10, numbered after them). An event has a delivery per destination it went
 * to, in `deliveries` (the outbox is the pending ones with a due time, found by the partial
 * index `deliveries_outbox` in the order they can be claimed), each with its attempts in
 * `delivery_attempts`; `events.forward_state` is their aggregate. The delivery of an event from
 * before moved there under its endpoint's id as destination id (legacyDestinationId), its
 * attempts with it, and `forward_attempts` is gone; the events' own forward columns other than
 * forward_state are no longer read. Endpoints gained their destinations' sealed target secrets.
 * Version 12: delivery control (design §18, ADRs 0087 and 0088). `destination_breakers` keeps a
 * destination's breaker and its rate limit's next turn (a row once it needed one); deliveries
 * gained `spared` (attempts that ended held, not counted against maxAttempts) and the partial
 * indexes `deliveries_held` (a destination's held deliveries, oldest first) and
 * `deliveries_claimed` (its claims, for its concurrency).
 * Version 13: bulk redelivery (design §18, ADR 0089). `redelivery_jobs` holds the jobs (filter,
 * counts, cursor, lease); a delivery a job put back in the outbox carries the job
 * (`deliveries.bulk_job_id`, indexed while set) and the attempts it had then
 * (`deliveries.attempt_base`, where its fresh attempt budget starts).
 * Version 14: deduplication (design §17, ADR 0083; numbered after versions 12 and 13, built
 * beside them). Endpoints gained their settings (`dedupe_json`, '' for none), events the first
 * event whose key they repeat (`duplicate_of`, NULL for none); `dedupe_keys` holds each
 * endpoint's keys (keyed hashes, never a key in clear) with their first event and the end of
 * their window, looked up and written in the append's transaction and purged once expired.
 * Version 15: the search index in runs (docs/performance.md, ADR 0093). An append keeps its
 * captures' search tokens in `search_pending` (a row per append); the indexer moves them into
 * `event_search` a thousand at a time, and a search reads both. A file from before has nothing
 * pending.
 */
export const SCHEMA_VERSION = 15;
/** The version whose opening moves an older file's deliveries (moveLegacyDeliveries). */
export const DELIVERIES_VERSION = 11;

/**
 * Columns added to a table after it first shipped. A new catalog gets them from CREATE TABLE;
 * a catalog created before them gets them when opened (addMissingColumns). ADD COLUMN needs
 * each to be nullable or to have a default, which is what rows written before hold.
 */
export const addedColumns = {
  api_keys: [
    ["name", "TEXT NOT NULL DEFAULT ''"],
    // JSON arrays: what the key may do, and the only endpoints it sees ([]: every one).
    ["scopes", `TEXT NOT NULL DEFAULT '["*"]'`],
    ["endpoint_ids", "TEXT NOT NULL DEFAULT '[]'"],
    ["expires_at", "INTEGER"],
    ["last_used_at", "INTEGER"],
  ],
  endpoints: [
    ["response_json", "TEXT NOT NULL DEFAULT ''"],
    ["sealed_previous_secret", "BLOB"],
    ["secret_rotated_at", "INTEGER"],
    ["sequence_counter", "INTEGER NOT NULL DEFAULT 0"],
    ["forward_json", "TEXT NOT NULL DEFAULT ''"],
    ["sealed_target_secret", "BLOB"],
    // The id of the last stamp the endpoint gave out (ADR 0008); NULL until its first append
    // by this version, which then reads its newest event instead.
    ["last_stamp_id", "TEXT"],
    // Inbound protection (design §16): its JSON, its sealed secrets, and what it refused.
    ["inbound_json", "TEXT NOT NULL DEFAULT ''"],
    ["sealed_inbound", "BLOB"],
    ["rejected_count", "INTEGER NOT NULL DEFAULT 0"],
    ["redact_json", "TEXT NOT NULL DEFAULT ''"],
    ["sealed_destination_secrets", "BLOB"],
    // Deduplication (design §17): the /v1 `dedupe` object as JSON; '' for none.
    ["dedupe_json", "TEXT NOT NULL DEFAULT ''"],
  ],
  events: [
    // The aggregate state of the event's deliveries (design §17); NULL: never forwarded.
    ["forward_state", "TEXT"],
    // Versions 3 to 8 kept the one delivery here; read once, by moveLegacyDeliveries.
    ["forward_target", "TEXT"],
    ["forward_next_at", "INTEGER"],
    ["forward_claim_owner", "TEXT"],
    ["forward_claim_until", "INTEGER"],
    // Attempt numbers given out: claims and direct attempts take the next one.
    ["forward_started", "INTEGER NOT NULL DEFAULT 0"],
    // How the capture's JSON body departs from its endpoint's schema of its type (design §19).
    ["schema_drift", "TEXT"],
    // The first event with the same deduplication key within its window (design §17); NULL: none.
    ["duplicate_of", "TEXT"],
  ],
  event_bodies: [
    ["sealed_request", "BLOB"],
    ["redactions", "TEXT NOT NULL DEFAULT ''"],
  ],
  deliveries: [
    // Attempts that ended held (design §18): not counted against maxAttempts.
    ["spared", "INTEGER NOT NULL DEFAULT 0"],
    // The bulk redelivery job that put the delivery back in the outbox (ADR 0089); NULL: none.
    ["bulk_job_id", "TEXT"],
    // Attempts it had when the job put it back, less the spared ones: its attempt budget counts from there.
    ["attempt_base", "INTEGER NOT NULL DEFAULT 0"],
  ],
} as const satisfies Record<string, readonly (readonly [name: string, definition: string])[]>;

const columnsSql = (table: keyof typeof addedColumns) =>
  addedColumns[table].map(([name, definition]) => `  ${name} ${definition}`).join(",\n");

export const schemaSql = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE IF NOT EXISTS accounts (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS api_keys (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts(id),
  key_hash BLOB NOT NULL UNIQUE,
  prefix TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER,
${columnsSql("api_keys")}
);
CREATE INDEX IF NOT EXISTS api_keys_account ON api_keys (account_id, created_at);

CREATE TABLE IF NOT EXISTS endpoints (
  key INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  account_id TEXT NOT NULL,
  slug TEXT NOT NULL,
  display_name TEXT NOT NULL,
  operating_mode TEXT NOT NULL,
  status TEXT NOT NULL,
  replay_from_dashboard INTEGER NOT NULL,
  replay_from_api INTEGER NOT NULL,
  provider TEXT NOT NULL,
  sealed_secret BLOB,
  generic_signature_header TEXT NOT NULL,
  generic_signature_prefix TEXT NOT NULL,
  source TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  event_count INTEGER NOT NULL DEFAULT 0,
  last_event_at INTEGER,
  last_purged_at INTEGER,
  purged_event_count INTEGER NOT NULL DEFAULT 0,
${columnsSql("endpoints")},
  UNIQUE (account_id, slug)
);
-- Pages of an account's endpoints by id, and the count of the endpoint quota (ADR 0036).
CREATE INDEX IF NOT EXISTS endpoints_account ON endpoints (account_id, id);

CREATE TABLE IF NOT EXISTS events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  endpoint_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  method TEXT NOT NULL,
  path TEXT NOT NULL,
  remote_ip TEXT NOT NULL,
  canonical_event_type TEXT NOT NULL,
  provider TEXT NOT NULL,
  verification TEXT NOT NULL,
  verification_failure_reason TEXT NOT NULL,
  response_code INTEGER NOT NULL,
  read_at INTEGER,
  truncated INTEGER NOT NULL,
  original_size_bytes INTEGER NOT NULL,
  body_stored INTEGER NOT NULL,
  key_id TEXT,
${columnsSql("events")}
);
CREATE INDEX IF NOT EXISTS events_page ON events (endpoint_id, received_at, id);
CREATE INDEX IF NOT EXISTS events_metadata_only ON events (endpoint_id, received_at) WHERE body_stored = 0;
CREATE INDEX IF NOT EXISTS events_received ON events (received_at);

CREATE TABLE IF NOT EXISTS event_bodies (
  seq INTEGER PRIMARY KEY,
  headers TEXT NOT NULL,
  ciphertext BLOB,
  wrapped_key BLOB,
  diagnostic TEXT NOT NULL,
  forwarded_response TEXT NOT NULL,
${columnsSql("event_bodies")}
);

-- An event's deliveries, one per destination (design §17), under the event's commit sequence.
-- claimable_at: when the delivery can be claimed (its due time, or its claim's end when later);
-- NULL outside the outbox.
CREATE TABLE IF NOT EXISTS deliveries (
  id INTEGER PRIMARY KEY,
  seq INTEGER NOT NULL,
  destination_id TEXT NOT NULL,
  state TEXT NOT NULL,
  target TEXT NOT NULL,
  next_at INTEGER,
  claim_owner TEXT,
  claim_until INTEGER,
  claimable_at INTEGER,
  started INTEGER NOT NULL DEFAULT 0,
${columnsSql("deliveries")},
  UNIQUE (seq, destination_id)
);
CREATE INDEX IF NOT EXISTS deliveries_outbox ON deliveries (claimable_at, seq) WHERE claimable_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS deliveries_pending ON deliveries (next_at) WHERE state = 'pending' AND next_at IS NOT NULL;
-- A destination's held deliveries, oldest first (design §18): the probe, the release, the count.
CREATE INDEX IF NOT EXISTS deliveries_held ON deliveries (destination_id, seq) WHERE state = 'held';
-- A destination's claimed deliveries (a claim ends with its record): its concurrency.
CREATE INDEX IF NOT EXISTS deliveries_claimed ON deliveries (destination_id, claim_until) WHERE claim_until IS NOT NULL;

-- A destination's breaker and its rate limit's next turn (design §18, ADR 0088): a row once it
-- needed one; none is a closed breaker that never failed. slot_at and queued_until are fractional ms.
CREATE TABLE IF NOT EXISTS destination_breakers (
  destination_id TEXT PRIMARY KEY,
  endpoint_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  state TEXT NOT NULL,
  since INTEGER,
  consecutive_failures INTEGER NOT NULL,
  probe_delay_ms INTEGER NOT NULL,
  next_probe_at INTEGER,
  probe_event_id TEXT,
  holding INTEGER NOT NULL,
  slot_at REAL NOT NULL,
  queued_until REAL NOT NULL,
  drained_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS destination_breakers_endpoint ON destination_breakers (endpoint_id);
CREATE INDEX IF NOT EXISTS destination_breakers_probe ON destination_breakers (next_probe_at) WHERE next_probe_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS destination_breakers_active ON destination_breakers (destination_id) WHERE holding = 1 OR state <> 'closed';

-- What destinations answered, per delivery: the response body sealed like request bodies.
CREATE TABLE IF NOT EXISTS delivery_attempts (
  seq INTEGER NOT NULL,
  destination_id TEXT NOT NULL,
  n INTEGER NOT NULL,
  triggered_by TEXT NOT NULL,
  at INTEGER NOT NULL,
  url TEXT NOT NULL,
  duration_ms INTEGER NOT NULL,
  status INTEGER NOT NULL,
  headers TEXT NOT NULL,
  ciphertext BLOB,
  wrapped_key BLOB,
  key_id TEXT,
  body_truncated INTEGER NOT NULL,
  error TEXT NOT NULL,
  request_sha256 TEXT NOT NULL DEFAULT '',
  message TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (seq, destination_id, n)
) WITHOUT ROWID;

CREATE VIRTUAL TABLE IF NOT EXISTS event_search USING fts5(
  terms, content='', contentless_delete=1, detail=none, tokenize='ascii'
);

-- Captures whose search tokens are not in event_search yet: a row per append, under its last
-- capture's commit sequence, holding each capture's sequence, endpoint key and packed tokens
-- (search-terms.ts, packPending); moved into the index in runs (search-index.ts), read by
-- every search.
CREATE TABLE IF NOT EXISTS search_pending (
  seq INTEGER PRIMARY KEY,
  entries BLOB NOT NULL
);

CREATE TABLE IF NOT EXISTS replay_counters (
  account_id TEXT NOT NULL,
  day TEXT NOT NULL,
  used INTEGER NOT NULL,
  PRIMARY KEY (account_id, day)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS replay_audit (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  endpoint_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  target_url TEXT NOT NULL,
  mode TEXT NOT NULL,
  result TEXT NOT NULL,
  target_status INTEGER NOT NULL,
  network_failure_reason TEXT NOT NULL,
  duration_ms INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  request_id TEXT NOT NULL,
  client TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS replay_audit_account ON replay_audit (account_id, created_at);

-- The audit log (design §15): who did what, newest first per account by (at, id).
CREATE TABLE IF NOT EXISTS audit_log (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  at INTEGER NOT NULL,
  action TEXT NOT NULL,
  key_id TEXT NOT NULL,
  key_prefix TEXT NOT NULL,
  remote_ip TEXT NOT NULL,
  request_id TEXT NOT NULL,
  endpoint_id TEXT,
  event_id TEXT,
  details TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_log_page ON audit_log (account_id, at, id);
CREATE INDEX IF NOT EXISTS audit_log_endpoint ON audit_log (account_id, endpoint_id, at, id);
CREATE INDEX IF NOT EXISTS audit_log_retention ON audit_log (at);

-- Running listeners (whc listen), one row each until expires_at passes without a heartbeat.
CREATE TABLE IF NOT EXISTS listeners (
  endpoint_id TEXT NOT NULL,
  id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  host TEXT NOT NULL,
  started_at INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  cursor_at INTEGER,
  cursor_id TEXT,
  lag_events INTEGER NOT NULL,
  lag_run_since INTEGER NOT NULL,
  last_error TEXT,
  PRIMARY KEY (endpoint_id, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS listeners_expiry ON listeners (expires_at);

-- Alert channels (design §18): events and endpoint_ids are JSON arrays, last_delivery the JSON
-- of the last alert's outcome (NULL before the first).
CREATE TABLE IF NOT EXISTS alert_channels (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  name TEXT NOT NULL,
  type TEXT NOT NULL,
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  endpoint_ids TEXT NOT NULL,
  sealed_secret BLOB,
  created_at INTEGER NOT NULL,
  last_delivery TEXT,
  UNIQUE (account_id, name)
);
CREATE INDEX IF NOT EXISTS alert_channels_account ON alert_channels (account_id, created_at, id);

-- The alert outbox (ADR 0085): one row per alert, coalesced per (channel, type, endpoint).
CREATE TABLE IF NOT EXISTS alerts (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  channel_id TEXT NOT NULL,
  type TEXT NOT NULL,
  endpoint_id TEXT NOT NULL,
  endpoint_slug TEXT NOT NULL,
  data TEXT NOT NULL,
  count INTEGER NOT NULL,
  first_at INTEGER NOT NULL,
  last_at INTEGER NOT NULL,
  due_at INTEGER NOT NULL,
  state TEXT NOT NULL,
  next_attempt_at INTEGER,
  claim_owner TEXT,
  claim_until INTEGER,
  started INTEGER NOT NULL,
  last_attempt_at INTEGER,
  last_status INTEGER NOT NULL,
  last_error TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS alerts_key ON alerts (channel_id, type, endpoint_id, due_at);
CREATE INDEX IF NOT EXISTS alerts_outbox ON alerts (next_attempt_at) WHERE state = 'pending';
CREATE INDEX IF NOT EXISTS alerts_finished ON alerts (due_at) WHERE state <> 'pending';
-- Bulk redelivery jobs (design §18, ADR 0089): the filter as JSON, the walk's cursor and end
-- (until), the counts, and the lease of the replay runner working it.
CREATE TABLE IF NOT EXISTS redelivery_jobs (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  endpoint_id TEXT NOT NULL,
  filter TEXT NOT NULL,
  state TEXT NOT NULL,
  total INTEGER NOT NULL,
  queued INTEGER NOT NULL,
  done INTEGER NOT NULL,
  failed INTEGER NOT NULL,
  walked INTEGER NOT NULL,
  cursor_at INTEGER,
  cursor_id TEXT,
  until_at INTEGER,
  until_id TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  finished_at INTEGER,
  created_by_key_id TEXT NOT NULL,
  created_by_key_prefix TEXT NOT NULL,
  lease_owner TEXT,
  lease_until INTEGER
);
-- An endpoint's list; the running ones (few: a handful per account) for claims and the quota.
-- The hourly purge of finished ones scans the table.
CREATE INDEX IF NOT EXISTS redelivery_jobs_endpoint ON redelivery_jobs (endpoint_id, created_at, id);
CREATE INDEX IF NOT EXISTS redelivery_jobs_running ON redelivery_jobs (lease_until, created_at) WHERE state = 'running';
-- What was learned of an endpoint's JSON bodies per event type (design §19): paths as
-- [[path, types mask, present], ...] in the order first seen; never a value.
CREATE TABLE IF NOT EXISTS event_schemas (
  endpoint_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  account_id TEXT NOT NULL,
  samples INTEGER NOT NULL,
  first_seen_at INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL,
  paths TEXT NOT NULL,
  drift_notice_at INTEGER,
  drifts_since_notice INTEGER NOT NULL,
  PRIMARY KEY (endpoint_id, event_type)
) WITHOUT ROWID;

-- Deduplication keys (design §17, ADR 0083): per endpoint, each key's keyed hash, the first
-- event that had it and when its window ends; expired ones are purged with retention.
CREATE TABLE IF NOT EXISTS dedupe_keys (
  endpoint_id TEXT NOT NULL,
  key_hash BLOB NOT NULL,
  first_event_id TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (endpoint_id, key_hash)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS dedupe_keys_expiry ON dedupe_keys (expires_at);
`;

/** Indexes over added columns: created once addMissingColumns has run. */
export const addedIndexesSql = `
-- Versions 3 to 8's outbox, on the events themselves.
DROP INDEX IF EXISTS events_outbox;
-- A job's deliveries (version 13): those still open settle it.
CREATE INDEX IF NOT EXISTS deliveries_bulk ON deliveries (bulk_job_id, state) WHERE bulk_job_id IS NOT NULL;
`;

/**
 * Moves the deliveries of a file from versions 3 to 8 (one per event, in the event's own
 * columns) to `deliveries`, under the endpoint's id as destination id (legacyDestinationId),
 * and their attempts from `forward_attempts` to `delivery_attempts`; the event's aggregate
 * state is its one delivery's. Run once, in the opening's migration transaction.
 */
export function moveLegacyDeliveries(db: Database.Database): void {
  db.exec(`
    INSERT OR IGNORE INTO deliveries (seq, destination_id, state, target, next_at, claim_owner, claim_until, claimable_at, started)
      SELECT seq, endpoint_id, forward_state, coalesce(forward_target, ''), forward_next_at, forward_claim_owner, forward_claim_until,
        CASE WHEN forward_state = 'pending' AND forward_next_at IS NOT NULL THEN max(forward_next_at, coalesce(forward_claim_until, 0)) END,
        forward_started
      FROM events WHERE forward_state IS NOT NULL ORDER BY seq;
    UPDATE events SET forward_target = NULL, forward_next_at = NULL, forward_claim_owner = NULL, forward_claim_until = NULL
      WHERE forward_target IS NOT NULL;
  `);
  const old = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'forward_attempts'").get();
  if (!old) return;
  db.exec(`
    INSERT OR IGNORE INTO delivery_attempts (seq, destination_id, n, triggered_by, at, url, duration_ms, status, headers, ciphertext, wrapped_key, key_id, body_truncated, error)
      SELECT a.seq, e.endpoint_id, a.n, a.triggered_by, a.at, a.url, a.duration_ms, a.status, a.headers, a.ciphertext, a.wrapped_key, a.key_id, a.body_truncated, a.error
      FROM forward_attempts a JOIN events e ON e.seq = a.seq;
    DROP TABLE forward_attempts;
  `);
}

/** Adds the columns of `addedColumns` a catalog created by an earlier version lacks. */
export function addMissingColumns(db: Database.Database): void {
  db.transaction(() => {
    for (const [table, columns] of Object.entries(addedColumns)) {
      const present = new Set((db.pragma(`table_info(${table})`) as { name: string }[]).map((c) => c.name));
      for (const [name, definition] of columns) {
        if (!present.has(name)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${name} ${definition}`);
      }
    }
  }).immediate();
}
