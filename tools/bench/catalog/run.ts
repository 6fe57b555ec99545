// Catalog benchmark: loads N events (default 1,000,000) into one endpoint plus 10 others on
// the embedded store, then reports p50/p99 of a first page, a page 10,000 events deep by
// cursor, a filtered page and a search, and the process RSS. Figures, not assertions.
//   npx tsx --tsconfig tsconfig.base.json tools/bench/catalog/run.ts [events] [dataDir]
import { randomBytes, createHash } from "node:crypto";
import { packSearchTokens } from "@whc/sealing";
import path from "node:path";
import { rmSync, statSync, readdirSync } from "node:fs";
import os from "node:os";
import { performance } from "node:perf_hooks";
import type { CatalogStore, EventQuery, NewEvent } from "@whc/catalog-core";
import { openSqliteStore } from "@whc/catalog-sqlite";

const TOTAL = Number(process.argv[2] ?? 1_000_000);
const dir = process.argv[3] ?? path.join(os.tmpdir(), `whc-bench-catalog-${process.pid}`);
// Bulk load in batches the size ingest's group commit reaches under heavy load.
const BATCH = Number(process.env.BATCH ?? 1000);
const WORDS_PER_BODY = 20;

const vocabulary = Array.from({ length: 5000 }, (_, i) => `w${i}`);
const token = (w: string) => createHash("sha256").update(w).digest().subarray(0, 8);
const tokens = vocabulary.map(token);
const ciphertext = randomBytes(1500);
const types = ["invoice.paid", "invoice.created", "customer.updated", "charge.refunded", "payout.paid"];

// Zipf-like: low word numbers are common, high ones rare.
function pickWord(): number {
  return Math.min(vocabulary.length - 1, Math.floor(Math.exp(Math.random() * Math.log(vocabulary.length)) - 1));
}

function event(accountId: string, endpointId: string, i: number): NewEvent {
  const words = new Set<number>();
  while (words.size < WORDS_PER_BODY) words.add(pickWord());
  return {
    accountId,
    endpointId,
    method: "POST",
    path: "",
    headers: [
      ["Content-Type", "application/json"],
      ["User-Agent", "Stripe/1.0"],
    ],
    remoteIp: "203.0.113.7",
    canonicalEventType: types[i % types.length]!,
    provider: "stripe",
    verification: i % 10 === 0 ? "failed" : "verified",
    verificationFailureReason: "",
    responseCode: i % 50 === 0 ? 413 : 200,
    truncated: false,
    originalSizeBytes: 1500,
    body: i % 100 === 99 ? undefined : { ciphertext, wrappedKey: randomBytes(60), keyId: "k1" },
    searchTokens: packSearchTokens(i % 100 === 99 ? [] : [...words].map((w) => tokens[w]!)),
    diagnosticJson: "{}",
    forwardedResponseJson: "{}",
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function measure(name: string, runs: number, fn: (i: number) => Promise<unknown>) {
  const times: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const t0 = performance.now();
    await fn(i);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  console.log(
    `${name.padEnd(34)} p50 ${percentile(times, 50).toFixed(2).padStart(7)} ms   p99 ${percentile(times, 99).toFixed(2).padStart(7)} ms   (${runs} runs)`,
  );
}

async function main() {
  rmSync(dir, { recursive: true, force: true });
  const store: CatalogStore = openSqliteStore({ file: path.join(dir, "catalog.db") });
  const { key } = await store.ensureApiKey("bench", randomBytes(32), "whc_bench", Date.now());
  const endpoints = [];
  for (let i = 0; i < 11; i += 1) {
    endpoints.push(
      await store.createEndpoint({
        id: randomUUIDv7Like(i),
        accountId: key.accountId,
        slug: `bench-${i}`,
        displayName: `bench ${i}`,
        operatingMode: "capture",
        status: "active",
        replayFromDashboard: true,
        replayFromApi: true,
        provider: "stripe",
        genericSignatureHeader: "",
        genericSignaturePrefix: "",
        source: "api",
        createdAt: Date.now(),
        updatedAt: Date.now(),
        eventCount: 0,
        purgedEventCount: 0,
      }),
    );
  }
  const main = endpoints[0]!;
  const others = endpoints.slice(1);

  console.log(`loading ${TOTAL} events into one endpoint (+${Math.round(TOTAL / 10)} spread over 10 others) in ${dir}`);
  const t0 = performance.now();
  let loaded = 0;
  const otherTotal = Math.round(TOTAL / 10);
  const all = TOTAL + otherTotal;
  for (let i = 0; i < all; i += BATCH) {
    const batch: NewEvent[] = [];
    for (let j = i; j < Math.min(i + BATCH, all); j += 1) {
      // Every 11th event goes to one of the 10 other endpoints, the rest to the main one.
      const target = j % 11 === 10 ? others[Math.floor(j / 11) % others.length]! : main;
      batch.push(event(key.accountId, target.id, j));
    }
    await store.appendEvents(batch, Date.now);
    loaded += batch.length;
    if (loaded % 200_000 < BATCH) {
      const rate = loaded / ((performance.now() - t0) / 1000);
      console.log(`  ${loaded} loaded, ${Math.round(rate)} events/s`);
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  console.log(`loaded ${loaded} events in ${seconds.toFixed(1)} s: ${Math.round(loaded / seconds)} events/s`);

  const count = (await store.getEndpoint(main.id))!.eventCount;
  const q = (extra: Partial<EventQuery>): EventQuery => ({ accountId: key.accountId, endpointId: main.id, limit: 50, ...extra });

  // Cursors 10,000 events deep, found once by paging.
  let cursor: { receivedAt: number; id: string } | undefined;
  for (let depth = 0; depth < 10_000; depth += 200) {
    const page = await store.listEvents(q({ limit: 200, before: cursor }));
    const last = page.events[page.events.length - 1]!;
    cursor = { receivedAt: last.receivedAt, id: last.id };
  }
  const deep = cursor!;

  console.log(`\nqueries on the endpoint with ${count} events:`);
  await measure("first page (50)", 300, () => store.listEvents(q({})));
  await measure("page 10,000 deep by cursor (50)", 300, () => store.listEvents(q({ before: deep })));
  await measure("filtered page: eventType", 300, () => store.listEvents(q({ eventType: "charge.refunded" })));
  await measure("filtered page: responseCode=413", 300, () => store.listEvents(q({ responseCode: 413 })));
  await measure("search: one common word", 300, () => store.listEvents(q({ searchTokens: [tokens[1]!] })));
  await measure("search: two words (AND)", 300, (i) => store.listEvents(q({ searchTokens: [tokens[2 + (i % 20)]!, tokens[40 + (i % 50)]!] })));
  await measure("search: one rare word", 300, (i) => store.listEvents(q({ searchTokens: [tokens[3000 + (i % 1000)]!] })));
  await measure("search: rare word 10,000 deep", 100, (i) => store.listEvents(q({ searchTokens: [tokens[3000 + (i % 1000)]!], before: deep })));

  const rssMb = process.memoryUsage().rss / 1024 / 1024;
  const bytes = readdirSync(dir).reduce((sum, f) => sum + statSync(path.join(dir, f)).size, 0);
  console.log(`\nRSS ${rssMb.toFixed(0)} MiB; store ${(bytes / 1024 / 1024).toFixed(0)} MiB on disk`);
  await store.close();
  if (!process.argv[3]) rmSync(dir, { recursive: true, force: true });
}

function randomUUIDv7Like(i: number): string {
  return `01a20000-0000-7000-8000-${String(i).padStart(12, "0")}`;
}

await main();
