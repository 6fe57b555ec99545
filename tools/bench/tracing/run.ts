// What tracing costs per internal call, measured with process.cpuUsage in one process:
// the tracing interceptors alone with tracing unset (the cost every capture pays when
// OTEL_EXPORTER_OTLP_ENDPOINT is not set), and a whole in-memory Connect call (the all-in-one
// path) with tracing unset and then on, exporting to a local OTLP/HTTP receiver. Figures only.
//
//   npx tsx --tsconfig tsconfig.base.json tools/bench/tracing/run.ts [calls]
import type { ConnectRouter, Interceptor, UnaryRequest, UnaryResponse } from "@connectrpc/connect";
import { CryptoService } from "@whc/contracts";
import { createLogger } from "@whc/logging";
import { createInMemoryTransport, createServiceClient, tracingClientInterceptor, tracingServerInterceptor } from "@whc/rpc";
import { startTracing } from "@whc/telemetry";
import { startOtlpReceiver } from "@whc/testing";

const calls = Number(process.argv[2] ?? 100_000);
const logger = createLogger("bench", "silent");
const routes = (router: ConnectRouter) => {
  router.service(CryptoService, { async getBlindIndexKey() {
    return { key: new Uint8Array([1]) };
  } });
};

/** CPU per call, the least of `rounds` runs (a shared machine only ever adds to it). */
async function cpuPerCall(call: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < calls / 10; i += 1) await call();
  const start = process.cpuUsage();
  for (let i = 0; i < calls; i += 1) await call();
  const used = process.cpuUsage(start);
  return ((used.user + used.system) / calls) * 1000;
}

async function compare(rows: [string, () => Promise<unknown>][], rounds = 3): Promise<void> {
  const best = rows.map(() => Infinity);
  for (let r = 0; r < rounds; r += 1) {
    for (const [i, [, call]] of rows.entries()) best[i] = Math.min(best[i]!, await cpuPerCall(call));
  }
  rows.forEach(([label], i) => console.log(`${label.padEnd(60)} ${best[i]!.toFixed(0).padStart(7)} ns/call`));
}

type Next = (req: UnaryRequest) => Promise<UnaryResponse>;
const answer = Promise.resolve({} as UnaryResponse);
const bare: Next = () => answer;
const chained = [tracingClientInterceptor(), tracingServerInterceptor()].reduceRight<Next>(
  (next, interceptor: Interceptor) => interceptor(next as never) as Next,
  bare,
);
const request = {} as UnaryRequest;

const client = createServiceClient(CryptoService, createInMemoryTransport(routes, logger, 10_000));
await compare([
  ["tracing unset: a no-op handler", () => bare(request)],
  ["tracing unset: the same behind both tracing interceptors", () => chained(request)],
]);
await compare([["tracing unset: a whole in-memory Connect call", () => client.getBlindIndexKey({})]]);

const receiver = await startOtlpReceiver();
const tracing = startTracing("bench", { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "200" });
const traced = createServiceClient(CryptoService, createInMemoryTransport(routes, logger, 10_000));
await compare([["tracing on: a whole in-memory Connect call (2 spans, exported)", () => traced.getBlindIndexKey({})]]);
await tracing.close().catch((err: unknown) => console.log(`close: ${String(err)}`));
await receiver.close();
console.log(`${receiver.spans().length} spans exported (the processor drops what its queue of 2,048 cannot hold)`);
