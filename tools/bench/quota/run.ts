// What deciding a key's request rate costs per request, for each place the limiter could live
// (ADR 0035): in the gateway process (a token bucket in memory), shared through NATS (a
// JetStream KV read-modify-write per request, or one core request/reply to a limiter), or in
// the catalog (one more RPC per request: the figure the auth check already pays, measured
// here over the in-memory transport the all-in-one process uses). Figures, not assertions.
//   npx tsx --tsconfig tsconfig.base.json tools/bench/quota/run.ts
import { readdirSync, readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { createHash } from "node:crypto";
import path from "node:path";
import { connect, JSONCodec, type KV } from "nats";
import { CatalogService } from "@whc/contracts";
import { createCatalogService } from "@whc/catalog-core";
import { openSqliteStore } from "@whc/catalog-sqlite";
import { createKeyRateLimiter } from "@whc/gateway-core";
import { createLogger } from "@whc/logging";
import { createInMemoryTransport, createServiceClient } from "@whc/rpc";
import { startNatsServer, tempDir } from "@whc/testing";

const KEYS = 10_000;
const keyIds = Array.from({ length: KEYS }, (_, i) => `key-${i}`);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** CPU seconds a process used so far (Linux /proc), or 0 when unknown. */
function processCpu(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** The nats-server listening on `port`, found by its command line. */
function natsServerPid(port: number): number | undefined {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      if (cmd[0]?.endsWith("nats-server") && cmd.includes(String(port))) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

/**
 * Sequential latency (µs, p50/p99) and, with `inFlight` at once, decisions per second and the
 * CPU per decision of this process and of `serverPid` (the shared limiter's server).
 */
async function measure(name: string, n: number, inFlight: number, op: (i: number) => Promise<unknown> | unknown, serverPid?: number) {
  for (let i = 0; i < Math.min(n, 500); i += 1) await op(i);
  const latencies: number[] = [];
  for (let i = 0; i < n; i += 1) {
    const t0 = performance.now();
    await op(i);
    latencies.push((performance.now() - t0) * 1000);
  }
  latencies.sort((a, b) => a - b);
  let next = 0;
  const cpu0 = process.cpuUsage();
  const server0 = processCpu(serverPid);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < n) await op(next++);
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const serverUs = ((processCpu(serverPid) - server0) * 1e6) / n;
  console.log(
    `${name.padEnd(50)} p50 ${percentile(latencies, 50).toFixed(0).padStart(5)} µs  p99 ${percentile(latencies, 99).toFixed(0).padStart(6)} µs  ` +
      `${Math.round(n / seconds).toLocaleString("en").padStart(7)}/s at ${inFlight} in flight  ` +
      `CPU ${((cpu.user + cpu.system) / n).toFixed(0)} µs/op here` +
      (serverPid === undefined ? "" : ` + ${serverUs.toFixed(0)} µs/op in nats-server`),
  );
}

async function inProcess() {
  const limiter = createKeyRateLimiter(1e9);
  const n = 2_000_000;
  const t0 = performance.now();
  for (let i = 0; i < n; i += 1) limiter.take(keyIds[i % KEYS]!);
  const ns = ((performance.now() - t0) * 1e6) / n;
  console.log(`${"in process: token bucket per key (Map)".padEnd(50)} ${ns.toFixed(0)} ns per decision, ${KEYS} keys, no I/O`);
}

async function catalogCall() {
  const dir = tempDir("whc-bench-quota-");
  const store = openSqliteStore({ file: path.join(dir.path, "catalog.db") });
  const hash = createHash("sha256").update("bench").digest();
  await store.ensureApiKey("bench", hash, "whc_bench", Date.now());
  const routes = (router: Parameters<Parameters<typeof createInMemoryTransport>[0]>[0]) => router.service(CatalogService, createCatalogService(store));
  const catalog = createServiceClient(CatalogService, createInMemoryTransport(routes, createLogger("bench", "silent"), 10_000));
  await measure("catalog RPC, in memory (auth's call per request)", 5000, 50, () => catalog.authenticateApiKey({ keyHash: hash }));
  await store.close();
  dir.remove();
}

async function overNats() {
  const server = await startNatsServer();
  const pid = natsServerPid(server.port);
  const nc = await connect({ servers: server.url });
  try {
    const kv: KV = await nc.jetstream().views.kv("whc_bench_rate", { history: 1 });
    const codec = JSONCodec<{ tokens: number; at: number }>();
    // A shared bucket: read it, refill and take, write it back if nobody wrote in between.
    const take = async (i: number) => {
      const key = keyIds[i % 100]!;
      for (;;) {
        const entry = await kv.get(key);
        const now = Date.now();
        const b = entry?.value.length ? codec.decode(entry.value) : { tokens: 1e9, at: now };
        const value = codec.encode({ tokens: b.tokens - 1, at: now });
        try {
          if (entry && entry.value.length) await kv.update(key, value, entry.revision);
          else await kv.create(key, value);
          return;
        } catch {
          // another writer won: read again
        }
      }
    };
    await measure("NATS JetStream KV: get + update (CAS) per request", 3000, 50, take, pid);
    // A limiter process answering over core NATS: one round trip per request.
    const local = createKeyRateLimiter(1e9);
    const limiterConn = await connect({ servers: server.url });
    limiterConn.subscribe("whc.bench.rate", {
      callback: (_e, m) => {
        local.take(new TextDecoder().decode(m.data));
        m.respond(new Uint8Array());
      },
    });
    await limiterConn.flush();
    const enc = new TextEncoder();
    await measure(
      "NATS core request/reply to a limiter (same process)",
      10_000,
      50,
      (i) => nc.request("whc.bench.rate", enc.encode(keyIds[i % KEYS]!), { timeout: 5000 }),
      pid,
    );
    await limiterConn.close();
  } finally {
    await nc.close();
    await server.stop();
  }
}

await inProcess();
await catalogCall();
await overNats();

