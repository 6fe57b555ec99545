import type Database from "better-sqlite3";
import type { CatalogStore, Cursor, EventPage, EventQuery } from "@whc/catalog-core";
import { summaryRows, type Row } from "./rows.js";
import { hasEveryToken, packTerms, searchMatch, uniqueTerms, unpackPending } from "./search-terms.js";

/** A list's columns: the summary, and the commit sequence that search pages by. */
const LISTED = `e.seq, ${summaryRows.columns("e")}`;

export interface Filter {
  sql: string;
  params: unknown[];
}

/** A search's terms: the index's MATCH expression, the endpoint and tokens a pending capture must have, and the pending captures that do. */
interface Match {
  terms: string;
  endpointId: string;
  endpointKey: number;
  tokens: Buffer;
  pending: number[];
}

interface Found {
  rows: Row[];
  hasOlder: boolean;
}

/** The non-cursor filters of operation 5, on alias `e` (bulk redelivery's too, ADR 0089). */
export function filtersOf(q: Omit<EventQuery, "accountId" | "endpointId" | "limit">): Filter {
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
  if (q.forwardState === "none") {
    parts.push("e.forward_state IS NULL");
  } else if (q.forwardState !== undefined) {
    parts.push("e.forward_state = ?");
    params.push(q.forwardState);
  }
  if (q.schemaDrift !== undefined) parts.push(q.schemaDrift ? "e.schema_drift IS NOT NULL" : "e.schema_drift IS NULL");
  if (q.duplicate !== undefined) parts.push(q.duplicate ? "e.duplicate_of IS NOT NULL" : "e.duplicate_of IS NULL");
  if (q.destinationId !== undefined) {
    parts.push("EXISTS (SELECT 1 FROM deliveries d WHERE d.seq = e.seq AND d.destination_id = ?)");
    params.push(q.destinationId);
  }
  return { sql: parts.map((p) => ` AND ${p}`).join(""), params };
}

function beforeSql(before: Cursor | undefined): string {
  return before ? " AND (e.received_at, e.id) < (?, ?)" : "";
}

function beforeParams(before: Cursor | undefined): unknown[] {
  return before ? [before.receivedAt, before.id] : [];
}

/**
 * Lists and searches of an endpoint's events, newest first, paged by (receivedAt, id)
 * cursors. A plain list walks the events_page index; a search walks the FTS5 index, whose
 * rowid is the commit sequence, and the captures not yet in it (search_pending).
 */
export function createEventSearch(db: Database.Database): Pick<CatalogStore, "listEvents"> {
  const stmt = {
    endpointKey: db.prepare("SELECT key FROM endpoints WHERE id = ?"),
    seqBelow: db.prepare(
      "SELECT seq FROM events WHERE endpoint_id = ? AND (received_at, id) < (?, ?) ORDER BY received_at DESC, id DESC LIMIT 1",
    ),
    pending: db.prepare("SELECT entries FROM search_pending").pluck(),
    seqAbove: db.prepare(
      "SELECT seq FROM events WHERE endpoint_id = ? AND (received_at, id) > (?, ?) ORDER BY received_at, id LIMIT 1",
    ),
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

  function listPlain(q: EventQuery, f: Filter): Found {
    const base = `SELECT ${LISTED} FROM events e WHERE e.endpoint_id = ?`;
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
    const rows = prep(`${base}${beforeSql(q.before)}${f.sql} ORDER BY e.received_at DESC, e.id DESC LIMIT ?`)
      .all(q.endpointId, ...beforeParams(q.before), ...f.params, q.limit + 1) as Row[];
    const hasOlder = rows.length > q.limit;
    return { rows: rows.slice(0, q.limit), hasOlder };
  }

  /**
   * The captures still pending for the index (search-index.ts) that match: those of the
   * endpoint holding every token searched for, by commit sequence. At most about 4,000
   * captures are pending (search-index.ts), each checked here in well under a microsecond per
   * token.
   */
  function pendingMatches(match: Match): number[] {
    const seqs: number[] = [];
    for (const packed of stmt.pending.iterate() as IterableIterator<Buffer>) {
      for (const e of unpackPending(packed)) if (e.endpointKey === match.endpointKey && hasEveryToken(e.tokens, match.tokens)) seqs.push(e.seq);
    }
    return seqs;
  }

  /**
   * Up to `limit` matches of a search in commit order (`order`) within `bound` (on the commit
   * sequence, given its column), from the index and from the pending captures that matched:
   * a capture is in exactly one of the two, so the first `limit` of their union are among
   * each one's first `limit`.
   */
  function matches(order: "ASC" | "DESC", bound: (seq: string) => string, boundParams: unknown[], match: Match, f: Filter, limit: number): Row[] {
    const indexed = prep(`SELECT ${LISTED} FROM event_search s
      JOIN events e ON e.seq = s.rowid
      WHERE event_search MATCH ? AND ${bound("s.rowid")}${f.sql}
      ORDER BY s.rowid ${order} LIMIT ?`).all(match.terms, ...boundParams, ...f.params, limit) as Row[];
    if (match.pending.length === 0) return indexed;
    // The endpoint again, though only its captures matched: the scoping reads in the query.
    const pending = prep(`SELECT ${LISTED} FROM events e
      WHERE e.seq IN (SELECT value FROM json_each(?)) AND e.endpoint_id = ? AND ${bound("e.seq")}${f.sql}
      ORDER BY e.seq ${order} LIMIT ?`).all(JSON.stringify(match.pending), match.endpointId, ...boundParams, ...f.params, limit) as Row[];
    const sign = order === "ASC" ? 1 : -1;
    return [...indexed, ...pending].sort((x, y) => sign * ((x.seq as number) - (y.seq as number))).slice(0, limit);
  }

  function listSearch(q: EventQuery, f: Filter, terms: string[]): Found {
    const endpoint = stmt.endpointKey.get(q.endpointId) as { key: number } | undefined;
    if (!endpoint || terms.length === 0) return { rows: [], hasOlder: false };
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
    const match: Match = { terms: searchMatch(endpoint.key, terms), endpointId: q.endpointId, endpointKey: endpoint.key, tokens: packTerms(terms), pending: [] };
    match.pending = pendingMatches(match);
    if (q.after) {
      const rows = matches("ASC", (seq) => `${seq} >= ? AND ${seq} <= ?`, [lower, upper], match, f, q.limit);
      rows.reverse();
      const oldest = rows[rows.length - 1];
      if (!oldest) return { rows, hasOlder: false };
      const older = matches("DESC", (seq) => `${seq} < ?`, [oldest.seq], match, f, 1);
      return { rows, hasOlder: older.length > 0 };
    }
    const rows = matches("DESC", (seq) => `${seq} <= ?`, [upper], match, f, q.limit + 1);
    return { rows: rows.slice(0, q.limit), hasOlder: rows.length > q.limit };
  }

  // One read transaction, one snapshot: another process's run that moves captures from
  // search_pending into the index in between could otherwise show a capture twice or not at all.
  const searchInOneSnapshot = db.transaction(listSearch);

  /** Metadata-only events a search leaves out (counted, not paged). */
  function excludedCount(q: EventQuery, f: Filter): number {
    const sql = `SELECT count(*) AS n FROM events e WHERE e.endpoint_id = ? AND e.body_stored = 0${f.sql}`;
    return (prep(sql).get(q.endpointId, ...f.params) as { n: number }).n;
  }

  return {
    async listEvents(q): Promise<EventPage> {
      const f = filtersOf(q);
      const { rows, hasOlder } = q.searchTokens ? searchInOneSnapshot(q, f, uniqueTerms(q.searchTokens)) : listPlain(q, f);
      return {
        events: rows.map((row) => summaryRows.read(row)),
        hasOlder,
        searchExcludedMetadataOnlyCount: q.searchTokens ? excludedCount(q, f) : 0,
      };
    },
  };
}
