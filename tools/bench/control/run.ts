// Where a destination's rate limit is kept (ADR 0087): measures a claim of the embedded catalog
// with and without delivery control, and what one rate limit turn would cost in a NATS KV
// bucket (a get and a compare-and-set update, as a limiter shared by replay replicas would
// take it). `npx tsx --tsconfig tsconfig.base.json tools/bench/control/run.ts`; the numbers
// go into the ADR with the machine they ran on.
import { randomUUID } from "node:crypto";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { connect } from "nats";
import { openSqliteStore } from "@whc/catalog-sqlite";
import { endpointFixture, eventFixture, keyHash } from "@whc/catalog-core/testing";
import { startNatsServer, tempDir } from "@whc/testing";

const DELIVERIES = 2000;
const ROUNDS = 400;

function quantiles(samples: number[]): string {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!.toFixed(3);
  return `p50 ${q(0.5)} ms, p99 ${q(0.99)} ms`;
}

async function claims(label: string, destination: Record<string, unknown>): Promise<void> {
  const dir = tempDir("whc-bench-control-");
  const store = openSqliteStore({ file: path.join(dir.path, "catalog.db") });
  try {
    const { key } = await store.ensureApiKey("bench", keyHash("bench"), "whc_bench", Date.now());
    const id = randomUUID();
    const forwardJson = JSON.stringify([{ id, name: "d", url: "https://bench.example.test/", ...destination }]);
    const endpoint = await store.createEndpoint(endpointFixture(key.accountId, { operatingMode: "relay", forwardJson }));
    for (let i = 0; i < DELIVERIES; i += 100) {
      const events = Array.from({ length: 100 }, () => eventFixture(endpoint, { forward: { scheduled: true, deliveries: [{ destinationId: id, target: "t" }] } }));
      await store.appendEvents(events, Date.now);
    }
    const times: number[] = [];
    let now = Date.now() + 1000;
    for (let r = 0; r < ROUNDS; r += 1) {
      now += 5;
      const t0 = performance.now();
      await store.claimDeliveries("bench", now, 30_000, 5);
      times.push(performance.now() - t0);
    }
    console.log(`${label}: claim of up to 5 (${DELIVERIES} due): ${quantiles(times)}`);
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

await claims("no control (closed breaker, no limit)", {});
await claims("rate limited 5/s (the others moved to their turns)", { rateLimit: { perSecond: 5 } });
await claims("concurrency 2", { rateLimit: { concurrency: 2 } });
await kvTurns();
