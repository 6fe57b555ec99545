import type Database from "better-sqlite3";
import { TOKEN_BYTES } from "@whc/sealing";
import { searchDocumentBytes, unpackPending, writeSearchDocument, type PendingEntry } from "./search-terms.js";
import { createWriteLockWait } from "./write-lock.js";

/**
 * When the captures' search terms move from `search_pending` into the FTS5 index: once this
 * many wait, or this long after the first of them was appended, whichever comes first.
 */
export interface SearchIndexTiming {
  /** Pending captures that start a run at once (default 1,000). */
  batch?: number;
  /** The longest a pending capture waits for a run, in milliseconds (default 500). */
  delayMs?: number;
  /**
   * Runs inside the append that brings `batch` captures, after its commit, instead of just after
   * it: tests know the index's state after each append. (The store answers an append first.)
   */
  inline?: boolean;
}

const DEFAULT_BATCH = 1000;
const DEFAULT_DELAY_MS = 500;
/** Captures one run moves at most (a whole append's more): a run holds the write lock for a few milliseconds. */
const MOST_PER_RUN = 2000;
/** Batches' worth of captures pending, at most, before an append runs them itself. */
const PENDING_BOUND = 4;
/** After a run that failed (the lock held past its timeout, a full disk): the next try. */
const RETRY_MS = 1000;

/**
 * Pages of merging done with each run: every run adds a segment to the index, and merging
 * them keeps searches to a few segments. A run's postings fill roughly one page per 200 to
 * 1,000, each rewritten once per level (about eight at 10^7 events); one page per 64
 * postings and at least 16 keeps ahead of that. FTS5 merges only levels holding 4 or more
 * segments, so an index that is already compact costs nothing here.
 */
function mergePagesFor(postings: number): number {
  return Math.max(16, Math.ceil(postings / 64));
}

export interface SearchIndexer {
  /** Told after each append that committed `count` captures with search terms. */
  appended(count: number): void;
  /**
   * Moves what is pending into the index (a clean stop leaves nothing pending) and stops the
   * timers; what a failed run leaves stays in the file for the next opening.
   */
  close(): void;
}

/**
 * The search index's writer. An append stores its captures' search terms in `search_pending`
 * (one row per append, inside its commit); this moves them into the FTS5 index in runs of
 * about a thousand, where one segment and one merge serve them all instead of one per commit
 * of about 25 (docs/performance.md, "The search index in runs"). A search reads both, so a
 * capture is found from its commit on (event-search.ts). Runs happen on this thread between
 * appends, each one transaction under the write lock: several processes sharing the file
 * never index a capture twice.
 */
export function createSearchIndexer(db: Database.Database, timing: SearchIndexTiming = {}): SearchIndexer {
  const batch = timing.batch ?? DEFAULT_BATCH;
  const delayMs = timing.delayMs ?? DEFAULT_DELAY_MS;
  const stmt = {
    count: db.prepare("SELECT entries FROM search_pending").pluck(),
    // A row per append: a run takes rows, oldest first, until it has MOST_PER_RUN captures.
    pending: db.prepare("SELECT seq, entries FROM search_pending ORDER BY seq").raw(),
    // Captures deleted while pending are left out: the index never holds a posting for them.
    stored: db.prepare("SELECT seq FROM events WHERE seq >= ? AND seq <= ?").pluck(),
    insert: db.prepare("INSERT INTO event_search (rowid, terms) VALUES (?, ?)"),
    remove: db.prepare("DELETE FROM search_pending WHERE seq <= ?"),
    merge: db.prepare("INSERT INTO event_search (event_search, rank) VALUES ('merge', ?)"),
  };
  const underWriteLock = createWriteLockWait(db);
  let documents = Buffer.alloc(0);
  const run = db.transaction((): number => {
    const entries: PendingEntry[] = [];
    let lastRow: number | undefined;
    for (const [seq, packed] of stmt.pending.iterate() as IterableIterator<[number, Buffer]>) {
      entries.push(...unpackPending(packed));
      lastRow = seq;
      if (entries.length >= MOST_PER_RUN) break;
    }
    if (lastRow === undefined) return 0;
    const first = entries[0];
    const stored = new Set(first ? (stmt.stored.all(first.seq, lastRow) as number[]) : []);
    let room = 0;
    for (const e of entries) room += searchDocumentBytes(e.tokens.length);
    if (documents.length < room) documents = Buffer.allocUnsafe(room);
    let postings = 0;
    let at = 0;
    for (const e of entries) {
      if (!stored.has(e.seq)) continue;
      const end = writeSearchDocument(e.endpointKey, e.tokens, documents, at);
      stmt.insert.run(e.seq, documents.subarray(at, end));
      at = end;
      postings += e.tokens.length / TOKEN_BYTES + 1;
    }
    stmt.remove.run(lastRow);
    if (postings > 0) stmt.merge.run(mergePagesFor(postings));
    return entries.length;
  });

  // Captures appended here since the last run (another process's are found by the timer's run).
  let waiting = 0;
  let timer: NodeJS.Timeout | undefined;
  let soon: NodeJS.Immediate | undefined;
  let closed = false;

  function clear(): void {
    if (timer) clearTimeout(timer);
    if (soon) clearImmediate(soon);
    timer = undefined;
    soon = undefined;
  }

  function moveAll(): void {
    while (underWriteLock(() => run.immediate()) >= MOST_PER_RUN);
  }

  /** One run (`all`: as many as it takes to empty the table). */
  function runNow(all = false): void {
    clear();
    if (closed || !db.open) return;
    try {
      if (all) moveAll();
      const moved = all ? 0 : underWriteLock(() => run.immediate());
      // More than one run's worth: the rest after the appends waiting now. Else nothing is
      // pending: appends run on this thread, none came in between.
      if (moved >= MOST_PER_RUN) soon = setImmediate(() => runNow());
      else waiting = 0;
    } catch {
      // The captures stay pending (and found by search); try again later.
      timer = setTimeout(() => runNow(), RETRY_MS);
      timer.unref();
    }
  }

  function schedule(): void {
    if (closed || soon) return;
    if (waiting >= batch) {
      if (timer) clearTimeout(timer);
      timer = undefined;
      soon = setImmediate(() => runNow());
    } else if (!timer && waiting > 0) {
      timer = setTimeout(() => runNow(), delayMs);
      timer.unref();
    }
  }

  // What an earlier process left pending is indexed soon after opening.
  if (!db.readonly) {
    for (const packed of stmt.count.iterate() as IterableIterator<Buffer>) waiting += unpackPending(packed).length;
    schedule();
  }

  return {
    appended(count) {
      if (count === 0) return;
      waiting += count;
      // Appends that never let the thread turn (a bulk load in one go) would leave the runs
      // waiting while the pending tail, which every search reads, grew: past PENDING_BOUND
      // batches the append runs them itself.
      if (waiting >= PENDING_BOUND * batch) runNow(true);
      else if (timing.inline && waiting >= batch) runNow();
      else schedule();
    },
    close() {
      closed = true;
      clear();
      if (!db.open || waiting === 0) return;
      try {
        moveAll();
      } catch {
        // Pending in the file: indexed after the next opening.
      }
    },
  };
}
