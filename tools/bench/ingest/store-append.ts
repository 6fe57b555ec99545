// The embedded store's share of a capture: CPU per event of appendEvents on the SQLite store in
// this thread (as the store thread runs it), in batches of 25 (what 50 connections settle into,
// docs/performance.md), with the benchmark's 1.5 KB event sealed and indexed as ingest does.
// Figures only.
//   npx tsx --tsconfig tsconfig.base.json tools/bench/ingest/store-append.ts [events] [batch]
// STORE=worker goes through the store's own thread as the all-in-one does (process CPU, both
// threads); NO_SEARCH=1 appends the same events without search tokens (what indexing costs).
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { NewEvent } from "@whc/catalog-core";
import { openSqliteStore, openSqliteStoreInWorker } from "@whc/catalog-sqlite";
import { createBlindIndexer, packRequest, packSearchTokens, seal } from "@whc/sealing";
import * as payload from "./payload.mjs";

const TOTAL = Number(process.argv[2] ?? 50_000);
const BATCH = Number(process.argv[3] ?? 25);
const body = Buffer.from(payload.body);
const headers = Object.entries(payload.headers) as [string, string][];
const key = randomBytes(32);
const indexer = createBlindIndexer(randomBytes(32));
const noSearch = process.env.NO_SEARCH === "1";

const dir = mkdtempSync(path.join(os.tmpdir(), "whc-bench-store-"));
// STORE=worker: through the store's own thread, as the all-in-one runs it (CPU of both threads).
const inWorker = process.env.STORE === "worker";
const store = inWorker ? await openSqliteStoreInWorker({ file: path.join(dir, "catalog.db") }) : openSqliteStore({ file: path.join(dir, "catalog.db") });
const { key: apiKey } = await store.ensureApiKey("bench", randomBytes(32), "whc_bench", Date.now());
const endpoint = await store.createEndpoint({
  id: randomUUID(),
  accountId: apiKey.accountId,
  slug: "bench",
  displayName: "bench",
  operatingMode: "capture",
  status: "active",
  replayFromDashboard: true,
  replayFromApi: true,
  provider: "generic",
  genericSignatureHeader: "",
  genericSignaturePrefix: "",
  source: "api",
  createdAt: Date.now(),
  updatedAt: Date.now(),
  eventCount: 0,
  purgedEventCount: 0,
} as never);

function event(i: number): NewEvent {
  // Each body differs in its id, as real traffic does: one new term per capture.
  const own = Buffer.from(body.toString("latin1").replace("evt_1NG8Du2eZvKYlo2CuKKVtHwe", `evt_${i.toString(36).padStart(24, "0")}`), "latin1");
  const wrappedKey = randomBytes(60);
  return {
    accountId: apiKey.accountId,
    endpointId: endpoint.id,
    method: "POST",
    path: "",
    headers: [],
    sealedRequest: { ciphertext: seal(key, packRequest({ path: "", headers }), Buffer.from("r")), wrappedKey, keyId: "k1" },
    remoteIp: "127.0.0.1",
    canonicalEventType: "invoice.payment_succeeded",
    provider: "generic",
    verification: "unverified",
    verificationFailureReason: "",
    responseCode: 200,
    truncated: false,
    originalSizeBytes: own.length,
    body: { ciphertext: seal(key, own, Buffer.from("b")), wrappedKey, keyId: "k1" },
    searchTokens: noSearch ? new Uint8Array(0) : packSearchTokens(indexer(own)),
    diagnosticJson: "",
    forwardedResponseJson: "",
  };
}

async function run(n: number): Promise<number> {
  const batches: NewEvent[][] = [];
  for (let i = 0; i < n; i += BATCH) batches.push(Array.from({ length: Math.min(BATCH, n - i) }, (_, j) => event(seq + i + j)));
  seq += n;
  const before = process.cpuUsage();
  for (const b of batches) {
    await store.appendEvents(b, Date.now);
    // The event loop turns between batches, as in the store's thread: the search index's run
    // that an append started (every 1,000 captures, search-index.ts) is counted too.
    await new Promise(setImmediate);
  }
  const used = process.cpuUsage(before);
  return ((used.user + used.system) / n);
}
let seq = 0;
await run(Math.min(5000, TOTAL)); // warm up (5,000: whole runs of the search index, none left pending)
const us = await run(TOTAL);
console.log(`appendEvents${inWorker ? " (store thread)" : ""}: ${us.toFixed(1)} µs CPU per event (${TOTAL} events in batches of ${BATCH}, ${noSearch ? "no" : indexer(body).length} search terms per body)`);
await store.close?.();
rmSync(dir, { recursive: true, force: true });
