// The floor of a durable capture: the least code that does what a capture must before its
// 200, to show what any design can reach on this machine. It reads the body, group-commits
// each capture (raw headers and body) to a SQLite file on a second thread, and answers after
// the commit, like ingest; it skips everything else ingest does (endpoint lookup, signature
// check, event type, request ids, metrics, notifications, the catalog's other indexes).
//
//   node tools/bench/ingest/floor-server.mjs PORT DATA_DIR MODE
//
// MODE:
//   store            the capture committed durably (WAL, synchronous=FULL, as the embedded catalog)
//   sealed           the same, the body sealed with AES-256-GCM and indexed for search first
//                    (HMAC-SHA256 of each distinct word, remembered per word; an FTS5 posting each)
//   store-volatile,  either without fsync (synchronous=OFF): not durable, only to price the
//   sealed-volatile  commits
import http from "node:http";
import { Worker } from "node:worker_threads";
import { createCipheriv, createHmac, randomBytes, randomUUID } from "node:crypto";

const [port, dataDir, mode] = [Number(process.argv[2]), process.argv[3], process.argv[4] ?? "store"];
const modes = ["store", "sealed", "store-volatile", "sealed-volatile"];
if (!modes.includes(mode)) throw new Error(`unknown mode ${mode}; one of ${modes.join(", ")}`);
const sealed = mode.startsWith("sealed");

const store = new Worker(new URL("./floor-store.mjs", import.meta.url), {
  workerData: { file: `${dataDir}/floor.db`, synchronous: mode.endsWith("volatile") ? "OFF" : "FULL", search: sealed },
});

const sealKey = randomBytes(32);
const indexKey = randomBytes(32);
const tokens = new Map();

function seal(body) {
  const nonce = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", sealKey, nonce);
  return Buffer.concat([nonce, cipher.update(body), cipher.final(), cipher.getAuthTag()]);
}

/** Search tokens of the distinct words of a body, 8 bytes each, packed in one buffer. */
function index(body) {
  const found = new Set();
  for (const [word] of body.toString("latin1").toLowerCase().matchAll(/[a-z0-9]+/g)) {
    let token = tokens.get(word);
    if (!token) {
      token = createHmac("sha256", indexKey).update(word).digest().subarray(0, 8);
      tokens.set(word, token);
    }
    found.add(token);
  }
  return Buffer.concat([...found]);
}

let queue = [];
let inFlight;
let scheduled = false;

function flush() {
  scheduled = false;
  if (inFlight || queue.length === 0) return;
  inFlight = queue;
  queue = [];
  store.postMessage(inFlight.map((c) => c.row));
}

function schedule() {
  if (scheduled || inFlight || queue.length === 0) return;
  scheduled = true;
  setImmediate(flush);
}

store.on("message", (ids) => {
  const answered = inFlight;
  inFlight = undefined;
  answered.forEach(({ res }, i) => {
    const text = `{"ok":true,"id":"${ids[i]}"}`;
    res.writeHead(200, { "content-type": "application/json", "content-length": text.length });
    res.end(text);
  });
  schedule();
});
store.on("error", (err) => {
  console.error(err);
  process.exit(1);
});

http
  .createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      const row = {
        id: randomUUID(),
        path: req.url,
        receivedAt: Date.now(),
        headers: JSON.stringify(req.rawHeaders),
        body: sealed ? seal(body) : body,
        tokens: sealed ? index(body) : undefined,
      };
      queue.push({ res, row });
      schedule();
    });
  })
  .listen(port, "127.0.0.1", () => process.stdout.write("floor ready\n"));
