// The floor server's store thread: one table of captures, keyed for listing one endpoint's
// newest first (fewer indexes than the catalog keeps), the embedded catalog's pragmas, and,
// when asked, a contentless FTS5 search index merged a slice per commit as the catalog does.
// Each message is one batch, committed in one transaction; the answer is the batch's ids.
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";

const { file, synchronous, search } = workerData;
const db = new Database(file);
db.pragma("page_size = 16384");
db.pragma("journal_mode = WAL");
db.pragma(`synchronous = ${synchronous}`);
db.pragma("cache_size = -65536");
db.exec(`
CREATE TABLE captures (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  endpoint_id TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  path TEXT NOT NULL,
  headers TEXT NOT NULL,
  body BLOB NOT NULL
);
CREATE INDEX captures_page ON captures (endpoint_id, received_at, id);
CREATE VIRTUAL TABLE capture_search USING fts5(terms, content='', contentless_delete=1, detail=none, tokenize='ascii');
INSERT INTO capture_search (capture_search, rank) VALUES ('automerge', 0);
`);
const insert = db.prepare("INSERT INTO captures (id, endpoint_id, received_at, path, headers, body) VALUES (?, 'bench', ?, ?, ?, ?)");
const insertTerms = db.prepare("INSERT INTO capture_search (rowid, terms) VALUES (?, ?)");
const merge = db.prepare("INSERT INTO capture_search (capture_search, rank) VALUES ('merge', ?)");

const asBuffer = (u8) => Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength);

const commit = db.transaction((rows) => {
  let postings = 0;
  for (const row of rows) {
    const seq = insert.run(row.id, row.receivedAt, row.path, row.headers, asBuffer(row.body)).lastInsertRowid;
    if (search && row.tokens.length > 0) {
      const tokens = asBuffer(row.tokens);
      let terms = "e1";
      for (let at = 0; at < tokens.length; at += 8) terms += ` ${tokens.toString("hex", at, at + 8)}`;
      insertTerms.run(seq, terms);
      postings += tokens.length / 8 + 1;
    }
  }
  if (postings > 0) merge.run(Math.max(16, Math.ceil(postings / 64)));
  return rows.map((row) => row.id);
});

parentPort.on("message", (rows) => parentPort.postMessage(commit(rows)));
