import Database from "better-sqlite3";
import { packSearchTokens } from "@whc/sealing";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NewEvent } from "@whc/catalog-core";
import { INVOICE, endpointFixture, eventFixture, forwardAttemptFixture, shapeText, token } from "@whc/catalog-core/testing";
import { tempDir } from "@whc/testing";
import { SCHEMA_VERSION, addedColumns, addedIndexesSql, schemaSql } from "./schema.js";
import { searchDocument } from "./search-terms.js";
import { openSqliteStore } from "./sqlite-store.js";

/**
 * The schema as version 1 shipped it (libs/catalog-sqlite/src/schema.ts before endpoints had
 * responses, previous secrets and sequences), copied as it was: files it created are in use.
 */
const SCHEMA_V1 = `
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
  revoked_at INTEGER
);

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
  UNIQUE (account_id, slug)
);

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
  key_id TEXT
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
  forwarded_response TEXT NOT NULL
);

CREATE VIRTUAL TABLE IF NOT EXISTS event_search USING fts5(
  terms, content='', contentless_delete=1, detail=none, tokenize='ascii'
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
`;

/**
 * Version 2 as it shipped: version 1 with the endpoint columns it added (the response, the
 * previous secret, its rotation time and the sequence counter), and no forwarding.
 */
const SCHEMA_V2 = SCHEMA_V1.replace(
  "  purged_event_count INTEGER NOT NULL DEFAULT 0,\n  UNIQUE (account_id, slug)",
  `  purged_event_count INTEGER NOT NULL DEFAULT 0,
  response_json TEXT NOT NULL DEFAULT '',
  sealed_previous_secret BLOB,
  secret_rotated_at INTEGER,
  sequence_counter INTEGER NOT NULL DEFAULT 0,
  UNIQUE (account_id, slug)`,
);

const ENDPOINT_ID = "01a20000-0000-7000-8000-0000000000e1";
const EVENT_ID = "01a20000-0000-7000-8000-0000000000f1";

/** A catalog file as version 1 (or 2) left it: one account, one endpoint with a secret, one event. */
function createOldCatalog(file: string, version: 1 | 2 = 1): void {
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.exec(version === 1 ? SCHEMA_V1 : SCHEMA_V2);
  db.prepare("INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)").run(String(version));
  db.prepare("INSERT INTO accounts (id, name, created_at) VALUES ('acct-1', 'old', 1)").run();
  db.prepare(
    `INSERT INTO endpoints (id, account_id, slug, display_name, operating_mode, status, replay_from_dashboard,
       replay_from_api, provider, sealed_secret, generic_signature_header, generic_signature_prefix, source,
       created_at, updated_at, event_count, last_event_at)
     VALUES (?, 'acct-1', 'old-slug', 'Old endpoint', 'capture', 'active', 1, 0, 'stripe', ?, '', '', 'api', 100, 200, 1, 300)`,
  ).run(ENDPOINT_ID, Buffer.from([7, 7, 7]));
  const { key } = db.prepare("SELECT key FROM endpoints WHERE id = ?").get(ENDPOINT_ID) as { key: number };
  const { lastInsertRowid } = db
    .prepare(
      `INSERT INTO events (id, endpoint_id, account_id, received_at, method, path, remote_ip, canonical_event_type,
         provider, verification, verification_failure_reason, response_code, truncated, original_size_bytes,
         body_stored, key_id)
       VALUES (?, ?, 'acct-1', 300, 'POST', '/x', '127.0.0.1', 'invoice.paid', 'stripe', 'verified', '', 200, 0, 5, 1, 'k1')`,
    )
    .run(EVENT_ID, ENDPOINT_ID);
  db.prepare("INSERT INTO event_bodies (seq, headers, ciphertext, wrapped_key, diagnostic, forwarded_response) VALUES (?, ?, ?, ?, '{}', '{}')").run(
    lastInsertRowid,
    JSON.stringify([["Content-Type", "application/json"]]),
    Buffer.from([1, 2, 3]),
    Buffer.from([9]),
  );
  db.prepare("INSERT INTO event_search (rowid, terms) VALUES (?, ?)").run(lastInsertRowid, searchDocument(key, packSearchTokens([token("legacy")])));
  db.close();
}

describe("embedded SQLite: a catalog created by version 1", () => {
  let where: ReturnType<typeof tempDir>;
  let file: string;
  beforeEach(() => {
    where = tempDir("whc-sqlite-v1-");
    file = path.join(where.path, "catalog.db");
    createOldCatalog(file);
  });
  afterEach(() => where.remove());

  it("opens with the new columns added, its endpoints and events readable as they were", async () => {
    const store = openSqliteStore({ file });
    try {
      const endpoint = await store.getEndpoint(ENDPOINT_ID, "acct-1");
      expect(endpoint).toMatchObject({
        slug: "old-slug",
        displayName: "Old endpoint",
        replayFromApi: false,
        provider: "stripe",
        eventCount: 1,
        lastEventAt: 300,
        responseJson: "",
        sequenceCounter: 0,
        sealedPreviousSecret: undefined,
        secretRotatedAt: undefined,
        redactJson: "",
      });
      expect([...endpoint!.sealedSecret!]).toEqual([7, 7, 7]);
      expect((await store.listEndpoints("acct-1")).map((e) => e.id)).toEqual([ENDPOINT_ID]);

      const event = await store.getEvent("acct-1", ENDPOINT_ID, EVENT_ID);
      expect(event).toMatchObject({ id: EVENT_ID, receivedAt: 300, path: "/x", responseCode: 200, headers: [["Content-Type", "application/json"]], redactionsJson: "" });
      expect([...event!.body!.ciphertext]).toEqual([1, 2, 3]);
      const found = await store.listEvents({ accountId: "acct-1", endpointId: ENDPOINT_ID, limit: 10, searchTokens: [token("legacy")] });
      expect(found.events.map((e) => e.id)).toEqual([EVENT_ID]);
    } finally {
      await store.close();
    }
    const db = new Database(file, { readonly: true });
    const columns = (db.pragma("table_info(endpoints)") as { name: string }[]).map((c) => c.name);
    expect(columns).toEqual(expect.arrayContaining(addedColumns.endpoints.map(([name]) => name)));
    const bodyColumns = (db.pragma("table_info(event_bodies)") as { name: string }[]).map((c) => c.name);
    expect(bodyColumns).toEqual(expect.arrayContaining(addedColumns.event_bodies.map(([name]) => name)));
    expect(db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get()).toEqual({ value: String(SCHEMA_VERSION) });
    db.close();
  });

  it("reads its API keys as holding every scope on every endpoint, unnamed, never used (design §15)", async () => {
    const hash = Buffer.alloc(32, 3);
    const db = new Database(file);
    db.prepare("INSERT INTO api_keys (id, account_id, key_hash, prefix, created_at) VALUES ('k-old', 'acct-1', ?, 'whc_old', 50)").run(hash);
    db.close();
    const store = openSqliteStore({ file });
    try {
      expect(await store.findApiKeyByHash(hash)).toMatchObject({ id: "k-old", accountName: "old", name: "", scopes: ["*"], endpointIds: [], expiresAt: undefined, lastUsedAt: undefined });
    } finally {
      await store.close();
    }
  });

  it("stamps an old endpoint's next capture after its newest old event, whatever the clock reads", async () => {
    const store = openSqliteStore({ file });
    try {
      const [s] = await store.appendEvents([eventFixture({ id: ENDPOINT_ID, accountId: "acct-1" })], () => 1);
      const after = await store.listEvents({ accountId: "acct-1", endpointId: ENDPOINT_ID, limit: 10, after: { receivedAt: 300, id: EVENT_ID } });
      expect(after.events.map((e) => e.id)).toEqual([s!.id]);
    } finally {
      await store.close();
    }
  });

  it("takes updates and sequences on the old rows, and keeps them across another open", async () => {
    const first = openSqliteStore({ file });
    const rotated = await first.updateEndpoint("acct-1", ENDPOINT_ID, { sealedSecret: new Uint8Array([8]), responseJson: '{"status":202}' }, 5000);
    expect([...rotated!.sealedPreviousSecret!]).toEqual([7, 7, 7]);
    const clock = Date.now;
    const event = (sequenceStatuses?: number[]) => ({
      accountId: "acct-1",
      endpointId: ENDPOINT_ID,
      method: "POST",
      path: "",
      headers: [],
      remoteIp: "127.0.0.1",
      canonicalEventType: "",
      provider: "stripe",
      verification: "unverified",
      verificationFailureReason: "",
      responseCode: 200,
      truncated: false,
      originalSizeBytes: 0,
      searchTokens: new Uint8Array(0),
      diagnosticJson: "{}",
      forwardedResponseJson: "{}",
      sequenceStatuses,
    });
    expect((await first.appendEvents([event([503, 200]), event()], clock)).map((r) => r?.responseCode)).toEqual([503, 200]);
    await first.close();

    const second = openSqliteStore({ file });
    try {
      const [next] = await second.appendEvents([event([503, 200])], clock);
      expect(next).toMatchObject({ sequenceIndex: 1, responseCode: 200 });
      expect(await second.getEndpoint(ENDPOINT_ID)).toMatchObject({ responseJson: '{"status":202}', secretRotatedAt: 5000, eventCount: 4, sequenceCounter: 2 });
    } finally {
      await second.close();
    }
  });

  it("reads its events' clear headers and path as before once requests are sealed (ADR 0009), and stores new ones sealed beside them", async () => {
    const store = openSqliteStore({ file });
    const key = { wrappedKey: new Uint8Array([4, 4]), keyId: "k2" };
    const sealedRequest = { ...key, ciphertext: new Uint8Array([5, 6, 7]) };
    // As ingest appends them now: headers and path only inside the sealed request.
    const sealedFixture = eventFixture({ id: ENDPOINT_ID, accountId: "acct-1" }, { headers: [], path: "", sealedRequest });
    const withBody: NewEvent = { ...sealedFixture, body: { ...key, ciphertext: new Uint8Array([1]) } };
    const metadataOnly: NewEvent = { ...sealedFixture, body: undefined, searchTokens: new Uint8Array(0) };
    try {
      const [a, b] = await store.appendEvents([withBody, metadataOnly], Date.now);
      const old = await store.getEvent("acct-1", ENDPOINT_ID, EVENT_ID);
      expect(old).toMatchObject({ path: "/x", headers: [["Content-Type", "application/json"]], sealedRequest: undefined });
      const sealed = await store.getEvent("acct-1", ENDPOINT_ID, a!.id);
      expect(sealed).toMatchObject({ path: "", headers: [], sealedRequest: { keyId: "k2" }, body: { keyId: "k2" } });
      expect([...sealed!.sealedRequest!.ciphertext, ...sealed!.sealedRequest!.wrappedKey]).toEqual([5, 6, 7, 4, 4]);
      // Without a body the data key is still kept, for the request.
      const meta = await store.getEvent("acct-1", ENDPOINT_ID, b!.id);
      expect(meta!.body).toBeUndefined();
      expect([[...meta!.sealedRequest!.ciphertext], [...meta!.sealedRequest!.wrappedKey], meta!.sealedRequest!.keyId]).toEqual([[5, 6, 7], [4, 4], "k2"]);
      // A list carries none of it, and a metadata-only event stays one.
      const page = await store.listEvents({ accountId: "acct-1", endpointId: ENDPOINT_ID, limit: 10 });
      expect(page.events.find((e) => e.id === b!.id)).toMatchObject({ bodyStored: false });
      expect(page.events.every((e) => !("sealedRequest" in e) && !("headers" in e))).toBe(true);
    } finally {
      await store.close();
    }
    const db = new Database(file, { readonly: true });
    expect((db.pragma("table_info(event_bodies)") as { name: string }[]).map((c) => c.name)).toContain("sealed_request");
    expect(db.prepare("SELECT count(*) AS n FROM event_bodies WHERE sealed_request IS NULL AND headers != '[]'").get()).toEqual({ n: 1 });
    db.close();
  });
});

describe("embedded SQLite: a catalog created by version 2", () => {
  let where: ReturnType<typeof tempDir>;
  let file: string;
  beforeEach(() => {
    where = tempDir("whc-sqlite-v2-");
    file = path.join(where.path, "catalog.db");
    createOldCatalog(file, 2);
  });
  afterEach(() => where.remove());

  const relayCapture = (): NewEvent => ({
    accountId: "acct-1",
    endpointId: ENDPOINT_ID,
    method: "POST",
    path: "/x",
    headers: [["Content-Type", "application/json"]],
    remoteIp: "127.0.0.1",
    canonicalEventType: "",
    provider: "stripe",
    verification: "unverified",
    verificationFailureReason: "",
    responseCode: 200,
    truncated: false,
    originalSizeBytes: 0,
    searchTokens: new Uint8Array(0),
    diagnosticJson: "{}",
    forwardedResponseJson: "{}",
    forward: { scheduled: true, deliveries: [{ destinationId: ENDPOINT_ID, target: "https://app.example.test/" }] },
  });

  it("opens with forwarding added: old endpoints forward nowhere, old events were never forwarded", async () => {
    const old = new Database(file, { readonly: true });
    const before = (old.pragma("table_info(endpoints)") as { name: string }[]).map((c) => c.name);
    old.close();
    expect(before).toContain("sequence_counter");
    expect(before).not.toContain("forward_json");

    const store = openSqliteStore({ file });
    try {
      expect(await store.getEndpoint(ENDPOINT_ID)).toMatchObject({ slug: "old-slug", forwardJson: "", sealedTargetSecret: undefined });
      expect((await store.getEvent("acct-1", ENDPOINT_ID, EVENT_ID))?.deliveries).toEqual([]);
      const none = await store.listEvents({ accountId: "acct-1", endpointId: ENDPOINT_ID, limit: 10, forwardState: "none" });
      expect(none.events.map((e) => [e.id, e.forwardState])).toEqual([[EVENT_ID, undefined]]);
      expect(await store.outboxStats()).toEqual({ pending: 0, oldestDueAt: undefined });
    } finally {
      await store.close();
    }
    const db = new Database(file, { readonly: true });
    for (const table of ["endpoints", "events"] as const) {
      const columns = (db.pragma(`table_info(${table})`) as { name: string }[]).map((c) => c.name);
      expect(columns).toEqual(expect.arrayContaining(addedColumns[table].map(([name]) => name)));
    }
    const indexes = (db.pragma("index_list(deliveries)") as { name: string; partial: number }[]).filter((i) => i.name === "deliveries_outbox");
    expect(indexes).toEqual([expect.objectContaining({ partial: 1 })]);
    expect(db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get()).toEqual({ value: String(SCHEMA_VERSION) });
    db.close();
  });

  it("takes forward settings and relay captures on the old rows, and keeps them across another open", async () => {
    const first = openSqliteStore({ file });
    const forwardJson = '{"url":"https://app.example.test/"}';
    const updated = await first.updateEndpoint("acct-1", ENDPOINT_ID, { operatingMode: "relay", forwardJson, sealedTargetSecret: new Uint8Array([4]) }, 5000);
    expect(updated).toMatchObject({ operatingMode: "relay", forwardJson });
    const [s] = await first.appendEvents([relayCapture()], Date.now);
    const ref = { accountId: "acct-1", endpointId: ENDPOINT_ID, eventId: s!.id, destinationId: ENDPOINT_ID };
    expect((await first.claimDeliveries("w1", s!.receivedAt, 1000, 10)).claims).toEqual([{ ...ref, attempt: 1 }]);
    await first.recordForwardAttempt(ref, forwardAttemptFixture(1), { kind: "worker", owner: "w1", state: "pending", nextAttemptAt: s!.receivedAt + 50 });
    await first.close();

    const second = openSqliteStore({ file });
    try {
      expect([...(await second.getEndpoint(ENDPOINT_ID))!.sealedTargetSecret!]).toEqual([4]);
      expect(await second.outboxStats()).toEqual({ pending: 1, oldestDueAt: s!.receivedAt + 50 });
      expect((await second.claimDeliveries("w2", s!.receivedAt + 50, 1000, 10)).claims).toEqual([{ ...ref, attempt: 2 }]);
      expect((await second.getEvent("acct-1", ENDPOINT_ID, EVENT_ID))?.deliveries).toEqual([]);
    } finally {
      await second.close();
    }
  });
});

/** forward_attempts as versions 3 to 8 shipped it: one delivery's attempts per event. */
const FORWARD_ATTEMPTS_V8 = `
CREATE TABLE forward_attempts (
  seq INTEGER NOT NULL,
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
  PRIMARY KEY (seq, n)
);
CREATE INDEX events_outbox ON events (forward_next_at) WHERE forward_state = 'pending';
`;

describe("embedded SQLite: a catalog created by version 8 (one delivery per event)", () => {
  let where: ReturnType<typeof tempDir>;
  let file: string;
  const T = "https://app.example.test/hooks/ci";
  let ids: { pending: string; delivered: string; captured: string };

  /**
   * A version 8 file: this version's schema without its deliveries, with the events' own forward
   * columns and forward_attempts holding a relay endpoint's pending delivery (claimed by a
   * worker that died: attempt 2 given out, attempt 1 recorded) and a delivered one.
   */
  beforeEach(async () => {
    where = tempDir("whc-sqlite-v8-");
    file = path.join(where.path, "catalog.db");
    const store = openSqliteStore({ file });
    const { key } = await store.ensureApiKey("old", Buffer.alloc(32, 8), "whc_old", 1);
    await store.createEndpoint(endpointFixture(key.accountId, { id: ENDPOINT_ID, operatingMode: "relay", forwardJson: '{"url":"https://app.example.test/hooks","keepPath":true,"timeoutMs":10000,"maxAttempts":6}' }));
    const stamps = await store.appendEvents([0, 1, 2].map(() => eventFixture({ id: ENDPOINT_ID, accountId: key.accountId })), () => 1000);
    ids = { pending: stamps[0]!.id, delivered: stamps[1]!.id, captured: stamps[2]!.id };
    await store.close();

    const db = new Database(file);
    db.exec(`DROP TABLE deliveries; DROP TABLE delivery_attempts; ${FORWARD_ATTEMPTS_V8}`);
    db.prepare("UPDATE meta SET value = '8' WHERE key = 'schema_version'").run();
    const seq = (id: string) => (db.prepare("SELECT seq FROM events WHERE id = ?").get(id) as { seq: number }).seq;
    const setDelivery = db.prepare(
      "UPDATE events SET forward_state = ?, forward_target = ?, forward_next_at = ?, forward_claim_owner = ?, forward_claim_until = ?, forward_started = ? WHERE seq = ?",
    );
    setDelivery.run("pending", T, 5000, "dead-worker", 9000, 2, seq(ids.pending));
    setDelivery.run("delivered", T, null, null, null, 2, seq(ids.delivered));
    const attempt = db.prepare(
      "INSERT INTO forward_attempts (seq, n, triggered_by, at, url, duration_ms, status, headers, body_truncated, error) VALUES (?, ?, ?, ?, ?, 12, ?, '[]', 0, ?)",
    );
    attempt.run(seq(ids.pending), 1, "initial", 5000, T, 0, "timeout");
    attempt.run(seq(ids.delivered), 1, "initial", 2000, T, 503, "");
    attempt.run(seq(ids.delivered), 2, "retry", 3000, T, 200, "");
    db.close();
  });
  afterEach(() => where.remove());

  it("moves each event's delivery and attempts to its endpoint's one destination, and drops the old tables", async () => {
    const store = openSqliteStore({ file });
    try {
      const accountId = (await store.getEndpoint(ENDPOINT_ID))!.accountId;
      const read = async (id: string) => (await store.getEvent(accountId, ENDPOINT_ID, id))!.deliveries;
      expect(await read(ids.pending)).toEqual([
        { destinationId: ENDPOINT_ID, state: "pending", target: T, nextAttemptAt: 5000, attempts: [expect.objectContaining({ n: 1, error: "timeout", requestSha256: "", message: "" })] },
      ]);
      expect((await read(ids.delivered)).map((d) => [d.destinationId, d.state, d.attempts.map((a) => [a.n, a.status])])).toEqual([
        [
          ENDPOINT_ID,
          "delivered",
          [
            [1, 503],
            [2, 200],
          ],
        ],
      ]);
      expect(await read(ids.captured)).toEqual([]);
      const list = async (q: { forwardState?: string; destinationId?: string }) =>
        (await store.listEvents({ accountId, endpointId: ENDPOINT_ID, limit: 10, ...q })).events.map((e) => e.id);
      expect(await list({ forwardState: "pending" })).toEqual([ids.pending]);
      expect(await list({ forwardState: "none" })).toEqual([ids.captured]);
      expect(await list({ destinationId: ENDPOINT_ID })).toEqual([ids.delivered, ids.pending]);
      // The dead worker's claim runs to its end; then the next number, never 2 again.
      expect(await store.outboxStats()).toEqual({ pending: 1, oldestDueAt: 5000 });
      expect(await store.nextDueAt(5000)).toBe(9000);
      expect((await store.claimDeliveries("w", 8999, 1000, 10)).claims).toEqual([]);
      expect((await store.claimDeliveries("w", 9000, 1000, 10)).claims).toEqual([{ accountId, endpointId: ENDPOINT_ID, eventId: ids.pending, destinationId: ENDPOINT_ID, attempt: 3 }]);
    } finally {
      await store.close();
    }
    const db = new Database(file, { readonly: true });
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')").all() as { name: string }[]).map((t) => t.name);
    expect(tables).not.toContain("forward_attempts");
    expect(tables).not.toContain("events_outbox");
    expect(db.prepare("SELECT count(*) AS n FROM events WHERE forward_target IS NOT NULL").get()).toEqual({ n: 0 });
    expect(db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get()).toEqual({ value: String(SCHEMA_VERSION) });
    db.close();
  });

  it("moves them once: a second opening finds them where the first put them", async () => {
    const first = openSqliteStore({ file });
    const accountId = (await first.getEndpoint(ENDPOINT_ID))!.accountId;
    await first.recordForwardAttempt(
      { accountId, endpointId: ENDPOINT_ID, eventId: ids.pending, destinationId: ENDPOINT_ID },
      forwardAttemptFixture(3, { trigger: "manual", status: 200 }),
      { kind: "direct" },
    );
    await first.close();
    const second = openSqliteStore({ file });
    try {
      const [delivery] = (await second.getEvent(accountId, ENDPOINT_ID, ids.pending))!.deliveries;
      expect([delivery?.state, delivery?.attempts.map((a) => a.n)]).toEqual(["delivered", [1, 3]]);
      expect(await second.outboxStats()).toEqual({ pending: 0, oldestDueAt: undefined });
    } finally {
      await second.close();
    }
  });
});

describe("embedded SQLite: a catalog created by version 8 (before alert channels)", () => {
  let where: ReturnType<typeof tempDir>;
  let file: string;
  beforeEach(() => {
    where = tempDir("whc-sqlite-v8-");
    file = path.join(where.path, "catalog.db");
    // Version 8 is today's schema without the alert tables, which version 9 added at its end.
    const db = new Database(file);
    db.pragma("journal_mode = WAL");
    db.exec(schemaSql.slice(0, schemaSql.indexOf("-- Alert channels")));
    db.exec(addedIndexesSql);
    db.prepare("INSERT INTO meta (key, value) VALUES ('schema_version', '8')").run();
    db.prepare("INSERT INTO accounts (id, name, created_at) VALUES ('acct-1', 'old', 1)").run();
    db.close();
  });
  afterEach(() => where.remove());

  it("opens with the alert tables added and takes channels and alerts, kept across another open", async () => {
    const old = new Database(file, { readonly: true });
    expect(old.prepare("SELECT name FROM sqlite_master WHERE name IN ('alert_channels', 'alerts')").all()).toEqual([]);
    old.close();

    const first = openSqliteStore({ file });
    const channel = {
      id: "01a20000-0000-7000-8000-0000000000c9",
      accountId: "acct-1",
      name: "ops",
      type: "slack" as const,
      url: "https://hooks.slack.example.test/services/x",
      events: ["signature.failed"],
      endpointIds: [],
      sealedSecret: undefined,
      createdAt: 10,
      lastDelivery: undefined,
    };
    await first.createAlertChannel(channel, 20);
    const [alertId] = await first.raiseAlerts([{ accountId: "acct-1", type: "signature.failed", data: { eventId: "e" } }], 100, 600_000);
    await first.close();

    const second = openSqliteStore({ file });
    try {
      expect(await second.listAlertChannels("acct-1")).toEqual([channel]);
      const claims = await second.claimAlerts("w", 100, 1000, 10);
      expect(claims.map((c) => [c.alert.id, c.channel.name, c.attempt])).toEqual([[alertId, "ops", 1]]);
    } finally {
      await second.close();
    }
    const db = new Database(file, { readonly: true });
    const indexes = (db.pragma("index_list(alerts)") as { name: string; partial: number }[]).filter((i) => i.name === "alerts_outbox");
    expect(indexes).toEqual([expect.objectContaining({ partial: 1 })]);
    expect(db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get()).toEqual({ value: String(SCHEMA_VERSION) });
    db.close();
  });
});

describe("embedded SQLite: a catalog created before schemas and drift (version 10, design §19)", () => {
  let where: ReturnType<typeof tempDir>;
  let file: string;
  beforeEach(() => {
    where = tempDir("whc-sqlite-v8-");
    file = path.join(where.path, "catalog.db");
    createOldCatalog(file);
  });
  afterEach(() => where.remove());

  it("opens with event_schemas and events.schema_drift added: old events never drifted, and schemas are learned and kept from then on", async () => {
    const first = openSqliteStore({ file });
    try {
      expect((await first.getEvent("acct-1", ENDPOINT_ID, EVENT_ID))?.schemaDrift).toBeUndefined();
      const clean = await first.listEvents({ accountId: "acct-1", endpointId: ENDPOINT_ID, limit: 10, schemaDrift: false });
      expect(clean.events.map((e) => e.id)).toEqual([EVENT_ID]);
      expect((await first.listEvents({ accountId: "acct-1", endpointId: ENDPOINT_ID, limit: 10, schemaDrift: true })).events).toEqual([]);
      expect(await first.listSchemas("acct-1", ENDPOINT_ID)).toEqual([]);
      const observed = { accountId: "acct-1", endpointId: ENDPOINT_ID, eventType: "invoice.paid", eventId: EVENT_ID, receivedAt: 300, shape: shapeText(INVOICE) };
      expect(await first.learnSchemas([observed], 3_600_000)).toEqual([]);
    } finally {
      await first.close();
    }
    const db = new Database(file, { readonly: true });
    expect((db.pragma("table_info(events)") as { name: string }[]).map((c) => c.name)).toContain("schema_drift");
    expect((db.pragma("table_info(event_schemas)") as { name: string }[]).map((c) => c.name)).toEqual(
      expect.arrayContaining(["endpoint_id", "event_type", "account_id", "samples", "paths"]),
    );
    db.close();
    const second = openSqliteStore({ file });
    try {
      const [schema] = await second.listSchemas("acct-1", ENDPOINT_ID);
      expect(schema).toMatchObject({ eventType: "invoice.paid", samples: 1, firstSeenAt: 300, lastSeenAt: 300 });
      expect(schema!.paths.map((p) => p.path)).toEqual(Object.keys(INVOICE));
    } finally {
      await second.close();
    }
  });
});

describe("embedded SQLite: a catalog created before deduplication (version 14, design §17)", () => {
  let where: ReturnType<typeof tempDir>;
  let file: string;
  beforeEach(() => {
    where = tempDir("whc-sqlite-v11-");
    file = path.join(where.path, "catalog.db");
    createOldCatalog(file);
  });
  afterEach(() => where.remove());

  it("opens with dedupe settings, duplicate_of and dedupe_keys added: old endpoints deduplicate nothing, old events are no duplicates, keys are kept from then on", async () => {
    const endpoint = { id: ENDPOINT_ID, accountId: "acct-1" };
    const keyed = () => eventFixture(endpoint, { dedupe: { keyHash: new Uint8Array(32).fill(7), windowMs: 60_000 } });
    const first = openSqliteStore({ file });
    let original: string | undefined;
    try {
      expect((await first.getEndpoint(ENDPOINT_ID))?.dedupeJson).toBe("");
      expect((await first.getEvent("acct-1", ENDPOINT_ID, EVENT_ID))?.duplicateOf).toBeUndefined();
      expect((await first.listEvents({ accountId: "acct-1", endpointId: ENDPOINT_ID, limit: 10, duplicate: false })).events.map((e) => e.id)).toEqual([EVENT_ID]);
      expect((await first.listEvents({ accountId: "acct-1", endpointId: ENDPOINT_ID, limit: 10, duplicate: true })).events).toEqual([]);
      const [a] = await first.appendEvents([keyed()], Date.now);
      original = a!.id;
      expect(a!.duplicateOf).toBeUndefined();
    } finally {
      await first.close();
    }
    const db = new Database(file, { readonly: true });
    expect((db.pragma("table_info(endpoints)") as { name: string }[]).map((c) => c.name)).toContain("dedupe_json");
    expect((db.pragma("table_info(events)") as { name: string }[]).map((c) => c.name)).toContain("duplicate_of");
    expect((db.pragma("table_info(dedupe_keys)") as { name: string }[]).map((c) => c.name)).toEqual(["endpoint_id", "key_hash", "first_event_id", "expires_at"]);
    expect(db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get()).toEqual({ value: String(SCHEMA_VERSION) });
    db.close();
    const second = openSqliteStore({ file });
    try {
      const [b] = await second.appendEvents([keyed()], Date.now);
      expect(b!.duplicateOf).toBe(original);
    } finally {
      await second.close();
    }
  });
});

describe("embedded SQLite: a catalog created by version 11 (before bulk redelivery, design §18)", () => {
  let where: ReturnType<typeof tempDir>;
  let file: string;
  const DESTINATION = "01a20000-0000-7000-8000-0000000000d1";
  let accountId: string;
  let eventId: string;

  /** A version 11 file: a relay endpoint's delivery delivered at attempt 1, no jobs table, deliveries without the job's columns. */
  beforeEach(async () => {
    where = tempDir("whc-sqlite-v11-");
    file = path.join(where.path, "catalog.db");
    const store = openSqliteStore({ file });
    const { key } = await store.ensureApiKey("old", Buffer.alloc(32, 11), "whc_old", 1);
    accountId = key.accountId;
    await store.createEndpoint(
      endpointFixture(accountId, { id: ENDPOINT_ID, operatingMode: "relay", forwardJson: JSON.stringify([{ id: DESTINATION, name: "d", url: "https://app.example.test/" }]) }),
    );
    const [stamp] = await store.appendEvents([eventFixture({ id: ENDPOINT_ID, accountId }, { forward: { scheduled: true, deliveries: [{ destinationId: DESTINATION, target: "https://app.example.test/" }] } })], () => 1000);
    eventId = stamp!.id;
    const [claim] = (await store.claimDeliveries("w", 2000, 1000, 10)).claims;
    await store.recordForwardAttempt(claim!, forwardAttemptFixture(1, { status: 200 }), { kind: "worker", owner: "w", state: "delivered" });
    await store.close();
    const db = new Database(file);
    db.exec("DROP INDEX deliveries_bulk; ALTER TABLE deliveries DROP COLUMN bulk_job_id; ALTER TABLE deliveries DROP COLUMN attempt_base; DROP TABLE redelivery_jobs");
    db.prepare("UPDATE meta SET value = '11' WHERE key = 'schema_version'").run();
    db.close();
  });
  afterEach(() => where.remove());

  it("opens with the jobs table and the deliveries' job columns added; an old delivery is redone by a job with a fresh budget", async () => {
    const store = openSqliteStore({ file });
    try {
      const job = await store.createRedeliveryJob(
        { id: "01a20000-0000-7000-8000-0000000000f1", accountId, endpointId: ENDPOINT_ID, filter: {}, createdAt: 3000, createdByKeyId: "01a20000-0000-7000-8000-0000000000c1", createdByKeyPrefix: "whc_old" },
        { runningPerAccount: 3, deliveriesPerJob: 10 },
      );
      expect(job.total).toBe(1);
      await store.claimRedeliveryJob("runner", 3000, 1000);
      expect(await store.runRedeliveryPage(job.id, "runner", 3000, 10, 1000)).toMatchObject({ queued: 1, walked: true });
      expect((await store.claimDeliveries("w", 3000, 1000, 10)).claims).toEqual([{ accountId, endpointId: ENDPOINT_ID, eventId, destinationId: DESTINATION, attempt: 2, bulkJobId: job.id, attemptBase: 1 }]);
    } finally {
      await store.close();
    }
    const db = new Database(file, { readonly: true });
    expect((db.pragma("index_list(deliveries)") as { name: string; partial: number }[]).filter((i) => i.name === "deliveries_bulk")).toEqual([expect.objectContaining({ partial: 1 })]);
    expect(db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get()).toEqual({ value: String(SCHEMA_VERSION) });
    db.close();
  });
});
