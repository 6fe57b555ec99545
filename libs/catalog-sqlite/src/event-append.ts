import type Database from "better-sqlite3";
import {
  appendedDeliveries,
  appendedForwardState,
  dedupeDecision,
  nextStamp,
  sequenceStatus,
  type AppendResult,
  type CatalogStore,
  type Clock,
  type EventSummaryRecord,
  type NewEvent,
  type Stamp,
} from "@whc/catalog-core";
import { DELIVERY_UPSERT_SQL, asBuffer, bodyRows, deliveryRow, deliveryRows, summaryRows } from "./rows.js";
import type { SearchIndexer } from "./search-index.js";
import { packPending, type PendingEntry } from "./search-terms.js";
import { createWriteLockWait } from "./write-lock.js";

/**
 * A new event's summary, as stamped at commit. Written out field by field: an object rest or
 * spread of the event cost 13-28 µs here, against about 1 µs for this literal.
 */
function summaryOf(e: NewEvent, s: Stamp, responseCode: number, duplicateOf: string | undefined): EventSummaryRecord {
  return {
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
    responseCode,
    readAt: undefined,
    truncated: e.truncated,
    originalSizeBytes: e.originalSizeBytes,
    bodyStored: Boolean(e.body),
    // The data key of the body and the sealed request (one per event, ADR 0009).
    keyId: (e.body ?? e.sealedRequest)?.keyId,
    // Every delivery starts pending (a duplicate's: duplicate), and so does their aggregate.
    forwardState: appendedForwardState(e, duplicateOf),
    duplicateOf,
  };
}

/** An endpoint as an append sees it: its row key and the last stamp it gave out. */
interface Stamping {
  key: number;
  last: string | undefined;
  count: number;
  lastAt: number;
}

/** A body this large is written to pages of its own, which nothing reads soon. */
const LARGE_BODY_BYTES = 64 * 1024;
/**
 * After this many bytes of large bodies, the connection's page cache is emptied (PRAGMA
 * shrink_memory). Every page a body is written through stays in the 64 MiB cache, so a
 * burst of large captures filled it with pages nobody reads soon, and kept that memory
 * (docs/performance.md, "Memory during and after a flood"). Ordinary bodies never trigger it.
 */
const LARGE_BODY_BYTES_BEFORE_SHRINK = 16 * 1024 * 1024;

/**
 * Appends: one IMMEDIATE transaction per batch, so appends of every process on the file take
 * turns. Each event is stamped inside it from its endpoint's last stamp, which the same
 * transaction moves (ADR 0008): per endpoint, commit order is (receivedAt, id) order. An
 * endpoint that has not stamped since this version starts from its newest event. An event
 * whose endpoint is gone is not stored and has no stamp. An event answered from its
 * endpoint's response sequence takes the endpoint's counter in the same transaction: a
 * rolled-back batch gives no index away, a committed one each index once. A capture of a
 * relay or proxy endpoint starts its delivery in the same transaction too. The captures' search
 * tokens are kept in `search_pending` in the same transaction (one row for the batch), and
 * `searchIndex` moves them into the index later, in runs (search-index.ts); the merging those
 * runs call for is done here, a slice per append.
 */
export function createEventAppend(db: Database.Database, searchIndex: SearchIndexer): Pick<CatalogStore, "appendEvents"> {
  const stmt = {
    endpoint: db.prepare(`SELECT key, coalesce(last_stamp_id,
      (SELECT id FROM events WHERE endpoint_id = endpoints.id ORDER BY received_at DESC, id DESC LIMIT 1)) AS last
      FROM endpoints WHERE id = ?`),
    insertEvent: db.prepare(summaryRows.insertSql()),
    insertBody: db.prepare(bodyRows.insertSql()),
    keepSearchTokens: db.prepare("INSERT INTO search_pending (seq, entries) VALUES (?, ?)"),
    bumpEndpoint: db.prepare(
      "UPDATE endpoints SET event_count = event_count + ?, last_event_at = max(coalesce(last_event_at, 0), ?), last_stamp_id = ? WHERE key = ?",
    ),
    insertDelivery: db.prepare(DELIVERY_UPSERT_SQL),
    takeSequence: db.prepare("UPDATE endpoints SET sequence_counter = sequence_counter + 1 WHERE key = ? RETURNING sequence_counter - 1 AS n"),
    dedupeKey: db.prepare("SELECT first_event_id AS firstEventId, expires_at AS expiresAt FROM dedupe_keys WHERE endpoint_id = ? AND key_hash = ?"),
    keepDedupeKey: db.prepare(`INSERT INTO dedupe_keys (endpoint_id, key_hash, first_event_id, expires_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (endpoint_id, key_hash) DO UPDATE SET first_event_id = excluded.first_event_id, expires_at = excluded.expires_at`),
  };

  /**
   * Deduplication (design §17, ADR 0083), inside the append's transaction: the key looked up
   * among the endpoint's and, unless the event repeats it within its window, kept for it. The
   * write lock makes every process's appends take turns, so they all agree on the first.
   */
  function deduplicated(e: NewEvent, s: Stamp): string | undefined {
    if (!e.dedupe) return undefined;
    const key = asBuffer(e.dedupe.keyHash);
    const stored = stmt.dedupeKey.get(e.endpointId, key) as { firstEventId: string; expiresAt: number } | undefined;
    const outcome = dedupeDecision(stored, s, e.dedupe.windowMs);
    if (outcome.keep) stmt.keepDedupeKey.run(e.endpointId, key, outcome.keep.firstEventId, outcome.keep.expiresAt);
    return outcome.duplicateOf;
  }

  /** The stored result of one event: with sequence statuses, the counter's next position. */
  function appended(e: NewEvent, s: Stamp, endpointKey: number): AppendResult {
    const statuses = e.sequenceStatuses;
    if (!statuses?.length) return { id: s.id, receivedAt: s.receivedAt, responseCode: e.responseCode };
    const { n } = stmt.takeSequence.get(endpointKey) as { n: number };
    return { id: s.id, receivedAt: s.receivedAt, responseCode: sequenceStatus(statuses, n), sequenceIndex: n };
  }

  const appendTx = db.transaction((events: NewEvent[], clock: Clock) => {
    const results: (AppendResult | undefined)[] = [];
    // A batch is mostly one endpoint's captures: look each endpoint up once.
    const endpoints = new Map<string, Stamping | undefined>();
    const searchable: PendingEntry[] = [];
    for (const e of events) {
      const now = clock();
      let endpoint = endpoints.get(e.endpointId);
      if (!endpoints.has(e.endpointId)) {
        const row = stmt.endpoint.get(e.endpointId) as { key: number; last: string | null } | undefined;
        endpoint = row && { key: row.key, last: row.last ?? undefined, count: 0, lastAt: 0 };
        endpoints.set(e.endpointId, endpoint);
      }
      if (!endpoint) {
        results.push(undefined);
        continue;
      }
      const s = nextStamp(endpoint.last, now);
      endpoint.last = s.id;
      endpoint.count += 1;
      endpoint.lastAt = s.receivedAt;
      const result = appended(e, s, endpoint.key);
      const duplicateOf = deduplicated(e, s);
      if (duplicateOf !== undefined) result.duplicateOf = duplicateOf;
      results.push(result);
      const { lastInsertRowid } = stmt.insertEvent.run(summaryRows.values(summaryOf(e, s, result.responseCode, duplicateOf)));
      const seq = Number(lastInsertRowid);
      stmt.insertBody.run(
        bodyRows.values({
          seq,
          headers: e.headers,
          ciphertext: e.body?.ciphertext,
          wrappedKey: (e.body ?? e.sealedRequest)?.wrappedKey,
          sealedRequest: e.sealedRequest?.ciphertext,
          diagnosticJson: e.diagnosticJson,
          forwardedResponseJson: e.forwardedResponseJson,
          redactionsJson: e.redactionsJson ?? "",
        }),
      );
      // A relay or proxy capture starts its deliveries here; a relay one's enter the outbox,
      // a duplicate's never do.
      if (e.forward) {
        for (const d of appendedDeliveries(e.forward, s.receivedAt, duplicateOf !== undefined)) stmt.insertDelivery.run(deliveryRows.values(deliveryRow(seq, d.destinationId, d.progress)));
      }
      if (e.body !== undefined && e.searchTokens.length > 0) {
        searchable.push({ seq, endpointKey: endpoint.key, tokens: e.searchTokens });
      }
    }
    for (const e of endpoints.values()) if (e?.count) stmt.bumpEndpoint.run(e.count, e.lastAt, e.last, e.key);
    const last = searchable[searchable.length - 1];
    if (last) stmt.keepSearchTokens.run(last.seq, packPending(searchable));
    searchIndex.mergeSlice();
    return { results, searchable: searchable.length };
  });

  const underWriteLock = createWriteLockWait(db);
  let largeBodyBytes = 0;
  return {
    async appendEvents(events, clock) {
      const { results, searchable } = underWriteLock(() => appendTx.immediate(events, clock));
      searchIndex.appended(searchable);
      for (const e of events) {
        const bytes = e.body?.ciphertext.length ?? 0;
        if (bytes >= LARGE_BODY_BYTES) largeBodyBytes += bytes;
      }
      if (largeBodyBytes >= LARGE_BODY_BYTES_BEFORE_SHRINK) {
        largeBodyBytes = 0;
        db.pragma("shrink_memory");
      }
      return results;
    },
  };
}
