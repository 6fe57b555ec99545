// Where a destination's rate limit is kept (ADR 0087): measures a claim of the embedded catalog
// with and without delivery control, and what one rate limit turn would cost in a NATS KV
// bucket (a get and a compare-and-set update, as a limiter shared by replay replicas would
// take it). `npx tsx --tsconfig tsconfig.base.json tools/bench/control/run.ts`; the numbers
// go into the ADR with the machine they ran on.
import { randomUUID } from "node:crypto";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { connect } from "nats";
import { createSqliteStore, openCatalogDatabase } from "@whc/catalog-sqlite";
import { endpointFixture, eventFixture, keyHash } from "@whc/catalog-core/testing";
import { startNatsServer, tempDir } from "@whc/testing";

const DELIVERIES = 4000;
const ROUNDS = 400;

function quantiles(samples: number[]): string {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!.toFixed(3);
  return `p50 ${q(0.5)} ms, p99 ${q(0.99)} ms`;
}

/** The claim before delivery control (schema 11's one UPDATE ... RETURNING), for comparison. */
const OLD_CLAIM_SQL = `UPDATE deliveries
  SET started = started + 1, claim_owner = ?, claim_until = ?, claimable_at = max(next_at, ?)
  WHERE id IN (SELECT id FROM deliveries WHERE claimable_at IS NOT NULL AND claimable_at <= ? ORDER BY claimable_at, seq LIMIT ?)
  RETURNING seq, destination_id, started, next_at, id`;

async function claims(label: string, destination: Record<string, unknown>, compare = false, synchronous = "FULL"): Promise<void> {
  const dir = tempDir("whc-bench-control-");
  const db = openCatalogDatabase(path.join(dir.path, "catalog.db"));
  // OFF: no fsync at commit, so the CPU the claim itself costs shows.
  db.pragma(`synchronous = ${synchronous}`);
  const store = createSqliteStore(db);
  try {
    const { key } = await store.ensureApiKey("bench", keyHash("bench"), "whc_bench", Date.now());
    const id = randomUUID();
    const forwardJson = JSON.stringify([{ id, name: "d", url: "https://bench.example.test/", ...destination }]);
    const endpoint = await store.createEndpoint(endpointFixture(key.accountId, { operatingMode: "relay", forwardJson }));
    for (let i = 0; i < DELIVERIES; i += 100) {
      const events = Array.from({ length: 100 }, () => eventFixture(endpoint, { forward: { scheduled: true, deliveries: [{ destinationId: id, target: "t" }] } }));
      await store.appendEvents(events, Date.now);
    }
    // With `compare`, the claim before delivery control runs in turn with this one on the same
    // connection (each commit's fsync dominates both; taking turns keeps the machine's noise out).
    const old = db.prepare(OLD_CLAIM_SQL);
    const eventOf = db.prepare("SELECT id, endpoint_id, account_id FROM events WHERE seq = ?");
    const oldClaim = compare
      ? db.transaction((at: number) => {
          for (const r of old.all("bench", at + 30_000, at + 30_000, at, 5) as { seq: number }[]) eventOf.get(r.seq);
        })
      : undefined;
    const times: number[] = [];
    const before: number[] = [];
    let now = Date.now() + 1000;
    for (let r = 0; r < ROUNDS; r += 1) {
      now += 5;
      if (oldClaim) {
        const t = performance.now();
        oldClaim.immediate(now);
        before.push(performance.now() - t);
        now += 5;
      }
      const t0 = performance.now();
      await store.claimDeliveries("bench", now, 30_000, 5);
      times.push(performance.now() - t0);
    }
    const sync = `synchronous ${synchronous}`;
    if (before.length > 0) console.log(`before delivery control (schema 11's claim), ${sync}, in turn with the next: ${quantiles(before)}`);
    console.log(`${label}, ${sync}: claim of up to 5 (${DELIVERIES} due): ${quantiles(times)}`);
  } finally {
    await store.close();
    dir.remove();
  }
}

async function kvTurns(): Promise<void> {
  const server = await startNatsServer();
  const nc = await connect({ servers: server.url });
  try {
    const kv = await (await nc.jetstream()).views.kv("bench_limits", { history: 1 });
    await kv.put("dest", JSON.stringify({ slotAt: 0 }));
    const times: number[] = [];
    for (let r = 0; r < ROUNDS; r += 1) {
      const t0 = performance.now();
      const entry = (await kv.get("dest"))!;
      const { slotAt } = entry.json<{ slotAt: number }>();
      await kv.update("dest", JSON.stringify({ slotAt: Math.max(slotAt, Date.now()) + 200 }), entry.revision);
      times.push(performance.now() - t0);
    }
    console.log(`NATS KV: one turn (get + compare-and-set update): ${quantiles(times)}`);
  } finally {
    await nc.close();
    await server.stop();
  }
}

await claims("no control (closed breaker, no limit)", {}, true);
await claims("no control (closed breaker, no limit)", {}, true, "OFF");
await claims("rate limited 5/s (the others moved to their turns)", { rateLimit: { perSecond: 5 } });
await claims("concurrency 2", { rateLimit: { concurrency: 2 } });
await kvTurns();
