import Database from "better-sqlite3";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { AppError } from "@whc/errors";
import type {
  ApiKeyRecord,
  CatalogStore,
  Cursor,
  EndpointRecord,
  EventPage,
  EventQuery,
  EventRecord,
  EventSummaryRecord,
  HeaderPair,
  NewEvent,
  ReplayAuditRecord,
  Stamp,
} from "@whc/catalog-core";
import { schemaSql, SCHEMA_VERSION } from "./schema.js";

type Row = Record<string, unknown>;

const EVENT_SUMMARY_COLUMNS = `e.seq, e.id, e.endpoint_id, e.account_id, e.received_at, e.method, e.path, e.remote_ip,
  e.canonical_event_type, e.provider, e.verification, e.verification_failure_reason, e.response_code,
  e.read_at, e.truncated, e.original_size_bytes, e.body_stored, e.key_id`;

function optionalNumber(value: unknown): number | undefined {
  return value === null || value === undefined ? undefined : Number(value);
}

function endpointFromRow(r: Row): EndpointRecord {
  return {
    id: r.id as string,
    accountId: r.account_id as string,
    slug: r.slug as string,
    displayName: r.display_name as string,
    operatingMode: r.operating_mode as string,
    status: r.status as string,
    replayFromDashboard: r.replay_from_dashboard === 1,
    replayFromApi: r.replay_from_api === 1,
    provider: r.provider as string,
    sealedSecret: r.sealed_secret ? new Uint8Array(r.sealed_secret as Buffer) : undefined,
    genericSignatureHeader: r.generic_signature_header as string,
    genericSignaturePrefix: r.generic_signature_prefix as string,
    source: r.source as string,
    createdAt: r.created_at as number,
    updatedAt: r.updated_at as number,
    eventCount: r.event_count as number,
    lastEventAt: optionalNumber(r.last_event_at),
    lastPurgedAt: optionalNumber(r.last_purged_at),
    purgedEventCount: r.purged_event_count as number,
  };
}

function apiKeyFromRow(r: Row): ApiKeyRecord {
  return {
    id: r.id as string,
    accountId: r.account_id as string,
    accountName: r.account_name as string,
    prefix: r.prefix as string,
    keyHash: new Uint8Array(r.key_hash as Buffer),
    createdAt: r.created_at as number,
    revokedAt: optionalNumber(r.revoked_at),
  };
}

function summaryFromRow(r: Row): EventSummaryRecord {
  return {
    id: r.id as string,
    accountId: r.account_id as string,
    endpointId: r.endpoint_id as string,
    receivedAt: r.received_at as number,
    method: r.method as string,
    path: r.path as string,
    remoteIp: r.remote_ip as string,
    canonicalEventType: r.canonical_event_type as string,
    provider: r.provider as string,
    verification: r.verification as string,
    verificationFailureReason: r.verification_failure_reason as string,
    responseCode: r.response_code as number,
    readAt: optionalNumber(r.read_at),
    truncated: r.truncated === 1,
    originalSizeBytes: r.original_size_bytes as number,
    bodyStored: r.body_stored === 1,
    keyId: (r.key_id as string | null) ?? undefined,
  };
}

/** The distinct tokens of a query, as lower-case hex terms, in first-seen order. */
function uniqueTerms(tokens: readonly Uint8Array[]): string[] {
  return [...new Set(tokens.map((t) => Buffer.from(t.buffer, t.byteOffset, t.byteLength).toString("hex")))];
}

/** The same bytes as a Buffer (what the driver binds as a blob), without copying them. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Page size of a new catalog file (docs/performance.md, "Embedded catalog page size"). */
const PAGE_SIZE = 16384;

const HEX_DIGITS = Buffer.from("0123456789abcdef", "latin1");

/**
 * Pages of search-index merging done with each append: every commit adds a small segment to
 * the index, and merging them keeps searches to a few segments. A batch's postings fill
 * roughly one page per 200 to 1,000, each rewritten once per level (about eight at 10^7
 * events); one page per 64 postings and at least 16 keeps ahead of that, in slices of a
 * few milliseconds. FTS5 merges only levels holding 4 or more segments, so an index that
 * is already compact costs nothing here.
 */
function mergePagesFor(postings: number): number {
  return Math.max(16, Math.ceil(postings / 64));
}

/**
 * One search document: the endpoint's own term, then each token in lower-case hex, written
 * byte by byte into one buffer and read back as one string (an append indexes dozens of
 * tokens per event; a string per token was most of the store's JavaScript time). A token
 * repeated in a body needs no removal: the index keeps one posting per document and term.
 */
function searchDocument(endpointKey: number, tokens: readonly Uint8Array[]): string {
  const head = `e${endpointKey}`;
  let size = head.length;
  for (const t of tokens) size += 1 + 2 * t.length;
  const doc = Buffer.allocUnsafe(size);
  let at = doc.write(head, 0, "latin1");
  for (const t of tokens) {
    doc[at++] = 0x20;
    for (let i = 0; i < t.length; i += 1) {
      const b = t[i] as number;
      doc[at++] = HEX_DIGITS[b >> 4] as number;
      doc[at++] = HEX_DIGITS[b & 15] as number;
    }
  }
  return doc.toString("latin1", 0, at);
}

/** An FTS5 AND query over the same terms; every term is quoted, so none is an operator. */
function searchMatch(endpointKey: number, terms: readonly string[]): string {
  return [`"e${endpointKey}"`, ...terms.map((t) => `"${t}"`)].join(" AND ");
}

interface Filter {
  sql: string;
  params: unknown[];
}

/** The non-cursor filters of operation 5, on alias `e`. */
function filtersOf(q: EventQuery): Filter {
  const parts: string[] = [];
  const params: unknown[] = [];
  if (q.fromMs !== undefined) {
    parts.push("e.received_at >= ?");
    params.push(q.fromMs);
  }
  if (q.toMs !== undefined) {
    parts.push("e.received_at < ?");
    params.push(q.toMs);
  }
  if (q.eventType !== undefined) {
    parts.push("e.canonical_event_type = ?");
    params.push(q.eventType);
  }
  if (q.provider !== undefined) {
    parts.push("e.provider = ?");
    params.push(q.provider);
  }
  if (q.responseCode !== undefined) {
    parts.push("e.response_code = ?");
    params.push(q.responseCode);
  }
  if (q.verification !== undefined) {
    parts.push("e.verification = ?");
    params.push(q.verification);
  }
  return { sql: parts.map((p) => ` AND ${p}`).join(""), params };
}

export interface SqliteStoreOptions {
  /** A file path, or ":memory:" for tests. */
  file: string;
}

function translate(err: unknown): never {
  if (AppError.is(err)) throw err;
  const code = (err as { code?: string }).code ?? "";
  if (code === "SQLITE_BUSY" || code === "SQLITE_LOCKED" || code === "SQLITE_IOERR" || code === "SQLITE_FULL") {
    throw new AppError("service_unavailable", `embedded store: ${code}`, { cause: err });
  }
  throw err;
}

/**
 * The embedded catalog: one SQLite file in WAL mode with synchronous=FULL, so a committed
 * batch survives a crash of the process or the machine before any sender is answered.
 */
export function openSqliteStore(options: SqliteStoreOptions): CatalogStore {
  if (options.file !== ":memory:") mkdirSync(path.dirname(path.resolve(options.file)), { recursive: true });
  const db = new Database(options.file);
  // A stored event's body row (ciphertext, headers, wrapped key: about 2.4 KB for a 1.5 KB
  // webhook) fits once in a 4 KiB page and six times in a 16 KiB one: a new catalog takes
  // about 40 % less disk and writes that much less per capture. Only a new file takes the
  // setting; an existing catalog keeps the page size it was created with.
  db.pragma(`page_size = ${PAGE_SIZE}`);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.pragma("foreign_keys = ON");
  db.pragma("busy_timeout = 5000");
  db.pragma("cache_size = -65536");
  db.exec(schemaSql);
  // The search index is merged a bounded slice per append (see appendTx), not by FTS5's
  // automerge, whose work comes in lumps of 64 pages per level: 40-60 ms commits under load.
  db.exec("INSERT INTO event_search(event_search, rank) VALUES ('automerge', 0)");
  db.prepare("INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)").run(String(SCHEMA_VERSION));

  const stmt = {
    accountByName: db.prepare("SELECT id FROM accounts WHERE name = ?"),
    insertAccount: db.prepare("INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)"),
    keyByHash: db.prepare(
      "SELECT k.*, a.name AS account_name FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_hash = ?",
    ),
    keyById: db.prepare(
      "SELECT k.*, a.name AS account_name FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.id = ?",
    ),
    insertKey: db.prepare("INSERT INTO api_keys (id, account_id, key_hash, prefix, created_at) VALUES (?, ?, ?, ?, ?)"),
    listKeys: db.prepare(
      "SELECT k.*, a.name AS account_name FROM api_keys k JOIN accounts a ON a.id = k.account_id ORDER BY k.created_at, k.id",
    ),
    listKeysOf: db.prepare(
      "SELECT k.*, a.name AS account_name FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE a.name = ? ORDER BY k.created_at, k.id",
    ),
    revokeKey: db.prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL"),
    countKeys: db.prepare("SELECT count(*) AS n FROM api_keys WHERE revoked_at IS NULL"),
    insertEndpoint: db.prepare(`INSERT INTO endpoints (id, account_id, slug, display_name, operating_mode, status,
      replay_from_dashboard, replay_from_api, provider, sealed_secret, generic_signature_header,
      generic_signature_prefix, source, created_at, updated_at, event_count, purged_event_count)
      VALUES (@id, @accountId, @slug, @displayName, @operatingMode, @status, @replayFromDashboard, @replayFromApi,
      @provider, @sealedSecret, @genericSignatureHeader, @genericSignaturePrefix, @source, @createdAt, @updatedAt, 0, 0)`),
    endpointById: db.prepare("SELECT * FROM endpoints WHERE id = ?"),
    endpointOf: db.prepare("SELECT * FROM endpoints WHERE id = ? AND account_id = ?"),
    listEndpoints: db.prepare("SELECT * FROM endpoints WHERE account_id = ? ORDER BY created_at, id"),
    endpointKey: db.prepare("SELECT key FROM endpoints WHERE id = ?"),
    deleteEndpoint: db.prepare("DELETE FROM endpoints WHERE id = ? AND account_id = ?"),
    endpointEventSeqs: db.prepare("SELECT seq FROM events WHERE endpoint_id = ?"),
    deleteEndpointBodies: db.prepare("DELETE FROM event_bodies WHERE seq IN (SELECT seq FROM events WHERE endpoint_id = ?)"),
    deleteEndpointEvents: db.prepare("DELETE FROM events WHERE endpoint_id = ?"),
    insertEvent: db.prepare(`INSERT INTO events (id, endpoint_id, account_id, received_at, method, path, remote_ip,
      canonical_event_type, provider, verification, verification_failure_reason, response_code, truncated,
      original_size_bytes, body_stored, key_id)
      VALUES (@id, @endpointId, @accountId, @receivedAt, @method, @path, @remoteIp, @canonicalEventType, @provider,
      @verification, @verificationFailureReason, @responseCode, @truncated, @originalSizeBytes, @bodyStored, @keyId)`),
    insertBody: db.prepare(`INSERT INTO event_bodies (seq, headers, ciphertext, wrapped_key, diagnostic, forwarded_response)
      VALUES (?, ?, ?, ?, ?, ?)`),
    insertSearch: db.prepare("INSERT INTO event_search (rowid, terms) VALUES (?, ?)"),
    mergeSearch: db.prepare("INSERT INTO event_search (event_search, rank) VALUES ('merge', ?)"),
    deleteSearch: db.prepare("DELETE FROM event_search WHERE rowid = ?"),
    deleteEndpointSearch: db.prepare("DELETE FROM event_search WHERE rowid IN (SELECT seq FROM events WHERE endpoint_id = ?)"),
    bumpEndpoint: db.prepare(
      "UPDATE endpoints SET event_count = event_count + ?, last_event_at = max(coalesce(last_event_at, 0), ?) WHERE key = ?",
    ),
    eventFull: db.prepare(`SELECT ${EVENT_SUMMARY_COLUMNS}, b.headers, b.ciphertext, b.wrapped_key, b.diagnostic, b.forwarded_response
      FROM events e JOIN event_bodies b ON b.seq = e.seq WHERE e.id = ? AND e.endpoint_id = ? AND e.account_id = ?`),
    markRead: db.prepare("UPDATE events SET read_at = ? WHERE id = ? AND read_at IS NULL"),
    eventForDelete: db.prepare("SELECT seq FROM events WHERE id = ? AND endpoint_id = ? AND account_id = ?"),
    deleteEventRow: db.prepare("DELETE FROM events WHERE seq = ?"),
    deleteBodyRow: db.prepare("DELETE FROM event_bodies WHERE seq = ?"),
    dropEndpointCount: db.prepare("UPDATE endpoints SET event_count = max(event_count - ?, 0) WHERE id = ?"),
    seqBelow: db.prepare(
      "SELECT seq FROM events WHERE endpoint_id = ? AND (received_at, id) < (?, ?) ORDER BY received_at DESC, id DESC LIMIT 1",
    ),
    seqAbove: db.prepare(
      "SELECT seq FROM events WHERE endpoint_id = ? AND (received_at, id) > (?, ?) ORDER BY received_at, id LIMIT 1",
    ),
    charge: db.prepare(`INSERT INTO replay_counters (account_id, day, used) VALUES (?, ?, 1)
      ON CONFLICT (account_id, day) DO UPDATE SET used = used + 1 WHERE used < ? RETURNING used`),
    usage: db.prepare("SELECT used FROM replay_counters WHERE account_id = ? AND day = ?"),
    insertAudit: db.prepare(`INSERT INTO replay_audit (id, account_id, endpoint_id, event_id, key_id, target_url, mode,
      result, target_status, network_failure_reason, duration_ms, created_at, request_id, client)
      VALUES (@id, @accountId, @endpointId, @eventId, @keyId, @targetUrl, @mode, @result, @targetStatus,
      @networkFailureReason, @durationMs, @createdAt, @requestId, @client)`),
    oldEvents: db.prepare("SELECT seq, endpoint_id FROM events WHERE received_at < ? ORDER BY received_at LIMIT ?"),
    notePurge: db.prepare(`UPDATE endpoints SET purged_event_count = purged_event_count + ?,
      event_count = max(event_count - ?, 0), last_purged_at = ? WHERE id = ?`),
    latest: db.prepare("SELECT max(received_at) AS latest FROM events"),
  };

  // Query shapes vary with the filters given; each shape is prepared once.
  const prepared = new Map<string, Database.Statement>();
  const prep = (sql: string): Database.Statement => {
    let statement = prepared.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      prepared.set(sql, statement);
    }
    return statement;
  };

  const ensureApiKeyTx = db.transaction((accountName: string, keyHash: Buffer, prefix: string, now: number) => {
    const existing = stmt.keyByHash.get(keyHash) as Row | undefined;
    if (existing) {
      if (existing.account_name !== accountName) {
        throw new AppError("conflict", "key already belongs to another account");
      }
      return { key: apiKeyFromRow(existing), created: false };
    }
    let account = stmt.accountByName.get(accountName) as Row | undefined;
    if (!account) {
      account = { id: randomUUID() };
      stmt.insertAccount.run(account.id, accountName, now);
    }
    const id = randomUUID();
    stmt.insertKey.run(id, account.id, keyHash, prefix, now);
    return { key: apiKeyFromRow(stmt.keyById.get(id) as Row), created: true };
  });

  const appendTx = db.transaction((events: NewEvent[], stamp: () => Stamp) => {
    const stamps: (Stamp | undefined)[] = [];
    const touched = new Map<number, { count: number; last: number }>();
    // A batch is mostly one endpoint's captures: look each endpoint up once.
    const keys = new Map<string, { key: number } | undefined>();
    let postings = 0;
    for (const e of events) {
      const s = stamp();
      let endpoint = keys.get(e.endpointId);
      if (!keys.has(e.endpointId)) {
        endpoint = stmt.endpointKey.get(e.endpointId) as { key: number } | undefined;
        keys.set(e.endpointId, endpoint);
      }
      stamps.push(endpoint ? s : undefined);
      if (!endpoint) continue;
      const indexed = e.body !== undefined && e.searchTokens.length > 0;
      const { lastInsertRowid } = stmt.insertEvent.run({
        id: s.id,
        endpointId: e.endpointId,
        accountId: e.accountId,
        receivedAt: s.receivedAt,
        method: e.method,
        path: e.path,
        remoteIp: e.remoteIp,
        canonicalEventType: e.canonicalEventType,
        provider: e.provider,
        verification: e.verification,
        verificationFailureReason: e.verificationFailureReason,
        responseCode: e.responseCode,
        truncated: e.truncated ? 1 : 0,
        originalSizeBytes: e.originalSizeBytes,
        bodyStored: e.body ? 1 : 0,
        keyId: e.body?.keyId ?? null,
      });
      const seq = Number(lastInsertRowid);
      stmt.insertBody.run(
        seq,
        JSON.stringify(e.headers),
        e.body ? asBuffer(e.body.ciphertext) : null,
        e.body ? asBuffer(e.body.wrappedKey) : null,
        e.diagnosticJson,
        e.forwardedResponseJson,
      );
      if (indexed) {
        stmt.insertSearch.run(seq, searchDocument(endpoint.key, e.searchTokens));
        postings += e.searchTokens.length + 1;
      }
      const t = touched.get(endpoint.key) ?? { count: 0, last: 0 };
      t.count += 1;
      t.last = Math.max(t.last, s.receivedAt);
      touched.set(endpoint.key, t);
    }
    for (const [key, t] of touched) stmt.bumpEndpoint.run(t.count, t.last, key);
    if (postings > 0) stmt.mergeSearch.run(mergePagesFor(postings));
    return stamps;
  });

  const deleteEndpointTx = db.transaction((accountId: string, endpointId: string) => {
    const endpoint = stmt.endpointOf.get(endpointId, accountId) as Row | undefined;
    if (!endpoint) return false;
    stmt.deleteEndpointSearch.run(endpointId);
    stmt.deleteEndpointBodies.run(endpointId);
    stmt.deleteEndpointEvents.run(endpointId);
    stmt.deleteEndpoint.run(endpointId, accountId);
    return true;
  });

  const deleteEventTx = db.transaction((accountId: string, endpointId: string, eventId: string) => {
    const row = stmt.eventForDelete.get(eventId, endpointId, accountId) as { seq: number } | undefined;
    if (!row) return false;
    stmt.deleteSearch.run(row.seq);
    stmt.deleteBodyRow.run(row.seq);
    stmt.deleteEventRow.run(row.seq);
    stmt.dropEndpointCount.run(1, endpointId);
    return true;
  });

  const getEventTx = db.transaction((accountId: string, endpointId: string, eventId: string, markReadAt?: number) => {
    if (markReadAt !== undefined) stmt.markRead.run(markReadAt, eventId);
    return stmt.eventFull.get(eventId, endpointId, accountId) as Row | undefined;
  });

  const PURGE_CHUNK = 2000;
  const purgeChunkTx = db.transaction((before: number, now: number) => {
    const rows = stmt.oldEvents.all(before, PURGE_CHUNK) as { seq: number; endpoint_id: string }[];
    const perEndpoint = new Map<string, number>();
    for (const r of rows) {
      stmt.deleteSearch.run(r.seq);
      stmt.deleteBodyRow.run(r.seq);
      stmt.deleteEventRow.run(r.seq);
      perEndpoint.set(r.endpoint_id, (perEndpoint.get(r.endpoint_id) ?? 0) + 1);
    }
    for (const [endpointId, n] of perEndpoint) stmt.notePurge.run(n, n, now, endpointId);
    return rows.length;
  });

  function listPlain(q: EventQuery, f: Filter): { rows: Row[]; hasOlder: boolean } {
    const base = `SELECT ${EVENT_SUMMARY_COLUMNS} FROM events e WHERE e.endpoint_id = ?`;
    if (q.after) {
      const rows = prep(`${base} AND (e.received_at, e.id) > (?, ?)${beforeSql(q.before)}${f.sql}
          ORDER BY e.received_at, e.id LIMIT ?`)
        .all(q.endpointId, q.after.receivedAt, q.after.id, ...beforeParams(q.before), ...f.params, q.limit) as Row[];
      rows.reverse();
      const oldest = rows[rows.length - 1];
      const bound: Cursor = oldest ? { receivedAt: oldest.received_at as number, id: oldest.id as string } : q.after;
      const older = prep(`SELECT 1 FROM events e WHERE e.endpoint_id = ? AND (e.received_at, e.id) < (?, ?)${f.sql} LIMIT 1`)
        .get(q.endpointId, bound.receivedAt, bound.id, ...f.params);
      return { rows, hasOlder: older !== undefined && oldest !== undefined };
    }
    const rows = db
      .prepare(`${base}${beforeSql(q.before)}${f.sql} ORDER BY e.received_at DESC, e.id DESC LIMIT ?`)
      .all(q.endpointId, ...beforeParams(q.before), ...f.params, q.limit + 1) as Row[];
    const hasOlder = rows.length > q.limit;
    return { rows: rows.slice(0, q.limit), hasOlder };
  }

  function listSearch(q: EventQuery, f: Filter, tokens: string[]): { rows: Row[]; hasOlder: boolean } {
    const endpoint = stmt.endpointKey.get(q.endpointId) as { key: number } | undefined;
    if (!endpoint || tokens.length === 0) return { rows: [], hasOlder: false };
    // Cursor pairs become bounds on the commit sequence, which sorts like (received_at, id).
    let upper = Number.MAX_SAFE_INTEGER;
    let lower = 0;
    if (q.before) {
      const row = stmt.seqBelow.get(q.endpointId, q.before.receivedAt, q.before.id) as { seq: number } | undefined;
      if (!row) return { rows: [], hasOlder: false };
      upper = row.seq;
    }
    if (q.after) {
      const row = stmt.seqAbove.get(q.endpointId, q.after.receivedAt, q.after.id) as { seq: number } | undefined;
      if (!row) return { rows: [], hasOlder: false };
      lower = row.seq;
    }
    const match = searchMatch(endpoint.key, tokens);
    const sql = (order: "ASC" | "DESC", bound: string) => `SELECT ${EVENT_SUMMARY_COLUMNS} FROM event_search s
      JOIN events e ON e.seq = s.rowid
      WHERE event_search MATCH ? AND ${bound}${f.sql}
      ORDER BY s.rowid ${order} LIMIT ?`;
    if (q.after) {
      const rows = prep(sql("ASC", "s.rowid >= ? AND s.rowid <= ?")).all(match, lower, upper, ...f.params, q.limit) as Row[];
      rows.reverse();
      const oldest = rows[rows.length - 1];
      if (!oldest) return { rows, hasOlder: false };
      const older = prep(sql("DESC", "s.rowid < ?")).get(match, oldest.seq, ...f.params, 1);
      return { rows, hasOlder: older !== undefined };
    }
    const rows = prep(sql("DESC", "s.rowid <= ?")).all(match, upper, ...f.params, q.limit + 1) as Row[];
    return { rows: rows.slice(0, q.limit), hasOlder: rows.length > q.limit };
  }

  return {
    kind: "sqlite",

    async ensureApiKey(accountName, keyHash, prefix, now) {
      try {
        return ensureApiKeyTx(accountName, Buffer.from(keyHash), prefix, now);
      } catch (err) {
        return translate(err);
      }
    },

    async findApiKeyByHash(keyHash) {
      const row = stmt.keyByHash.get(Buffer.from(keyHash)) as Row | undefined;
      return row ? apiKeyFromRow(row) : undefined;
    },

    async listApiKeys(accountName) {
      const rows = (accountName ? stmt.listKeysOf.all(accountName) : stmt.listKeys.all()) as Row[];
      return rows.map(apiKeyFromRow);
    },

    async revokeApiKey(keyId, now) {
      const row = stmt.keyById.get(keyId) as Row | undefined;
      if (!row) return undefined;
      stmt.revokeKey.run(now, keyId);
      return apiKeyFromRow(stmt.keyById.get(keyId) as Row);
    },

    async countActiveApiKeys() {
      return (stmt.countKeys.get() as { n: number }).n;
    },

    async createEndpoint(e) {
      try {
        stmt.insertEndpoint.run({
          ...e,
          replayFromDashboard: e.replayFromDashboard ? 1 : 0,
          replayFromApi: e.replayFromApi ? 1 : 0,
          sealedSecret: e.sealedSecret && e.sealedSecret.length ? Buffer.from(e.sealedSecret) : null,
        });
      } catch (err) {
        if ((err as { code?: string }).code === "SQLITE_CONSTRAINT_UNIQUE") {
          throw new AppError("slug_taken", "slug taken", { field: "slug" });
        }
        return translate(err);
      }
      return endpointFromRow(stmt.endpointById.get(e.id) as Row);
    },

    async getEndpoint(endpointId, accountId) {
      const row = (accountId === undefined
        ? stmt.endpointById.get(endpointId)
        : stmt.endpointOf.get(endpointId, accountId)) as Row | undefined;
      return row ? endpointFromRow(row) : undefined;
    },

    async listEndpoints(accountId) {
      return (stmt.listEndpoints.all(accountId) as Row[]).map(endpointFromRow);
    },

    async deleteEndpoint(accountId, endpointId) {
      try {
        return deleteEndpointTx(accountId, endpointId);
      } catch (err) {
        return translate(err);
      }
    },

    async appendEvents(events, stamp) {
      try {
        return appendTx(events, stamp);
      } catch (err) {
        return translate(err);
      }
    },

    async listEvents(q): Promise<EventPage> {
      const f = filtersOf(q);
      const { rows, hasOlder } = q.searchTokens
        ? listSearch(q, f, uniqueTerms(q.searchTokens))
        : listPlain(q, f);
      let excluded = 0;
      if (q.searchTokens) {
        excluded = (
          db
            .prepare(`SELECT count(*) AS n FROM events e WHERE e.endpoint_id = ? AND e.body_stored = 0${f.sql}`)
            .get(q.endpointId, ...f.params) as { n: number }
        ).n;
      }
      return { events: rows.map(summaryFromRow), hasOlder, searchExcludedMetadataOnlyCount: excluded };
    },

    async getEvent(accountId, endpointId, eventId, markReadAt) {
      const r = getEventTx(accountId, endpointId, eventId, markReadAt);
      if (!r) return undefined;
      const record: EventRecord = {
        ...summaryFromRow(r),
        headers: JSON.parse(r.headers as string) as HeaderPair[],
        body:
          r.body_stored === 1
            ? {
                ciphertext: new Uint8Array(r.ciphertext as Buffer),
                wrappedKey: new Uint8Array(r.wrapped_key as Buffer),
                keyId: r.key_id as string,
              }
            : undefined,
        diagnosticJson: r.diagnostic as string,
        forwardedResponseJson: r.forwarded_response as string,
      };
      delete (record as Partial<EventSummaryRecord>).bodyStored;
      delete (record as Partial<EventSummaryRecord>).keyId;
      return record;
    },

    async deleteEvent(accountId, endpointId, eventId) {
      try {
        return deleteEventTx(accountId, endpointId, eventId);
      } catch (err) {
        return translate(err);
      }
    },

    async chargeReplay(accountId, day, limit) {
      if (limit <= 0) return { allowed: false, used: await this.getReplayUsage(accountId, day) };
      const row = stmt.charge.get(accountId, day, limit) as { used: number } | undefined;
      if (row) return { allowed: true, used: row.used };
      return { allowed: false, used: await this.getReplayUsage(accountId, day) };
    },

    async getReplayUsage(accountId, day) {
      return ((stmt.usage.get(accountId, day) as { used: number } | undefined)?.used) ?? 0;
    },

    async recordReplayAudit(audit: ReplayAuditRecord) {
      stmt.insertAudit.run(audit);
    },

    async purgeEvents(before, now) {
      let total = 0;
      for (;;) {
        const n = purgeChunkTx(before, now);
        total += n;
        if (n < PURGE_CHUNK) return total;
        // Let other work run between chunks: a purge never stalls ingest for long.
        await new Promise((resolve) => setImmediate(resolve));
      }
    },

    async latestReceivedAt() {
      return ((stmt.latest.get() as { latest: number | null }).latest) ?? 0;
    },

    async ping() {
      return db.open && db.prepare("SELECT 1 AS ok").get() !== undefined;
    },

    async close() {
      if (db.open) db.close();
    },
  };
}

function beforeSql(before: Cursor | undefined): string {
  return before ? " AND (e.received_at, e.id) < (?, ?)" : "";
}

function beforeParams(before: Cursor | undefined): unknown[] {
  return before ? [before.receivedAt, before.id] : [];
}
