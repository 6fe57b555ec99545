import type Database from "better-sqlite3";
import { TOKEN_BYTES } from "@whc/sealing";
import { searchDocumentBytes, unpackPending, writeSearchDocument, type PendingEntry } from "./search-terms.js";
import { createWriteLockWait } from "./write-lock.js";

/** When the captures' search terms move from `search_pending` into the FTS5 index. */
export interface SearchIndexTiming {
  /** Pending captures that start a run after the append that brings them (default 1,000). */
  batch?: number;
  /**
   * Runs inside the append that brings `batch` captures, after its commit, instead of just after
   * it: tests know the index's state after each append. (The store answers an append first.)
   */
  inline?: boolean;
}

const DEFAULT_BATCH = 1000;
/** Captures one run moves at most (a whole append's more): a run holds the write lock for a few milliseconds. */
const MOST_PER_RUN = 2000;
/** Batches' worth of captures pending, at most, before an append runs them itself. */
const PENDING_BOUND = 4;

/**
 * Pages of merging a run calls for: every run adds a segment to the index, and merging them
 * keeps searches to a few segments. A run's postings fill roughly one page per 200 to 1,000,
 * each rewritten once per level (about eight at 10^7 events); one page per 64 postings and at
 * least 16 keeps ahead of that. FTS5 merges only levels holding 4 or more segments, so an
 * index that is already compact costs nothing here.
 */
function mergePagesFor(postings: number): number {
  return Math.max(16, Math.ceil(postings / 64));
}

/**
 * Pages of that merging done in each append's transaction, until the runs' calls are met. All
 * of a run's at once (657 pages for a thousand captures) took 12-40 ms when a level was due,
 * every appender waiting (p99 35 ms against 10 before, docs/performance.md); in slices, as the
 * appends merged before runs, it stays a millisecond or two.
 */
const MERGE_SLICE_PAGES = 32;

export interface SearchIndexer {
  /** In each append's transaction: a slice of the merging the runs called for, if any is owed. */
  mergeSlice(): void;
  /** Told after each append that committed `count` captures with search terms. */
  appended(count: number): void;
  /**
   * Moves what is pending into the index: a clean stop leaves nothing pending. What a failed
   * run leaves stays in the file for the next opening.
   */
  close(): void;
}

/**
 * The search index's writer. An append stores its captures' search terms in `search_pending`
 * (one row per append, inside its commit); this moves them into the FTS5 index in runs of
 * about a thousand, where one segment and one merge serve them all instead of one per commit
 * of about 25 (docs/performance.md, "The search index in runs"). A search reads both, so a
 * capture is found from its commit on, however long it waits for a run (event-search.ts).
 *
 * A run follows the append that brings `batch` captures waiting (on this thread, once the
 * append is answered), or the opening that finds them; nothing runs on a timer, so a store
 * that takes no appends writes nothing. A run is one transaction under the write lock:
 * several processes sharing the file never index a capture twice. One that failed (the lock
 * held past its timeout, a full disk) leaves its captures pending, to the next append's run.
 */
export function createSearchIndexer(db: Database.Database, timing: SearchIndexTiming = {}): SearchIndexer {
  const batch = timing.batch ?? DEFAULT_BATCH;
  const stmt = {
    allPending: db.prepare("SELECT entries FROM search_pending").pluck(),
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
  // Pages of merging the runs called for and the appends have not done yet (this process's;
  // lost with it, which only leaves the next runs' merging to do it).
  let owed = 0;
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
    if (postings > 0) owed += mergePagesFor(postings);
    return entries.length;
  });

  // Captures appended here since the last run (another process's count in its own).
  let waiting = 0;
  let soon: NodeJS.Immediate | undefined;
  let closed = false;

  function moveAll(): void {
    while (underWriteLock(() => run.immediate()) >= MOST_PER_RUN);
  }

  /** One run (`all`: as many as it takes to empty the table). */
  function runNow(all = false): void {
    if (soon) clearImmediate(soon);
    soon = undefined;
    if (closed || !db.open) return;
    try {
      // One run of more than MOST_PER_RUN leaves the rest to after the appends waiting now.
      if (!all && underWriteLock(() => run.immediate()) >= MOST_PER_RUN) {
        soon = setImmediate(() => runNow());
        return;
      }
      if (all) moveAll();
      // Nothing is pending now: appends run on this thread, none came in between.
      waiting = 0;
    } catch {
      // The captures stay pending, and found by search; the next append tries again.
    }
  }

  // What an earlier process left pending is indexed soon after opening, once a run's worth.
  if (!db.readonly) {
    for (const packed of stmt.allPending.iterate() as IterableIterator<Buffer>) waiting += unpackPending(packed).length;
    if (waiting >= batch) soon = setImmediate(() => runNow());
  }

  return {
    mergeSlice() {
      if (owed === 0) return;
      const pages = Math.min(owed, MERGE_SLICE_PAGES);
      stmt.merge.run(pages);
      owed -= pages;
    },
    appended(count) {
      if (count === 0) return;
      waiting += count;
      // Appends that never let the thread turn (a bulk load in one go) would leave the runs
      // waiting while the pending tail, which every search reads, grew: past PENDING_BOUND
      // batches the append runs them itself.
      if (waiting >= PENDING_BOUND * batch) runNow(true);
      else if (waiting >= batch && timing.inline) runNow();
      else if (waiting >= batch && !soon) soon = setImmediate(() => runNow());
    },
    close() {
      closed = true;
      if (soon) clearImmediate(soon);
      soon = undefined;
      if (!db.open || waiting === 0) return;
      try {
        moveAll();
      } catch {
        // Pending in the file: indexed after a later opening.
      }
    },
  };
}
