import Database from "better-sqlite3";
import { createHash } from "node:crypto";
import { rmSync } from "node:fs";
const batch = Number(process.argv[2]); const terms = Number(process.argv[3]); const opt = process.argv[4] ?? "";
for (const s of ["", "-wal", "-shm"]) rmSync("/tmp/fts3.db" + s, { force: true });
const db = new Database("/tmp/fts3.db"); db.pragma("journal_mode = WAL"); db.pragma("synchronous = FULL");
db.exec("CREATE VIRTUAL TABLE ft USING fts5(terms, content='', contentless_delete=1, detail=none, tokenize='ascii')");
if (opt) db.exec(`INSERT INTO ft(ft, rank) VALUES('${opt.split("=")[0]}', ${opt.split("=")[1]})`);
const vocab = Array.from({ length: 3000 }, (_, i) => createHash("sha256").update("w" + i).digest().subarray(0, 8).toString("hex"));
const ins = db.prepare("INSERT INTO ft (rowid, terms) VALUES (?, ?)");
let seq = 0; const N = 20000; const t0 = performance.now();
const tx = db.transaction((docs) => { for (const [s, t] of docs) ins.run(s, t); });
for (let b = 0; b < N / batch; b++) { const docs = []; for (let e = 0; e < batch; e++) { seq++; const s = new Set(); while (s.size < terms) s.add(Math.floor(Math.random() * (Math.random() < 0.5 ? 50 : 3000))); docs.push([seq, "e1 " + [...s].map(w => vocab[w]).join(" ")]); } tx(docs); }
console.log(`batch ${batch} terms ${terms} ${opt}: ${((performance.now() - t0) * 1000 / N).toFixed(1)} us/event`);
