import { spawn } from "node:child_process";
import http2 from "node:http2";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport, createConnectTransport } from "@connectrpc/connect-node";
import { createServiceClient, createPeerTransport } from "@whc/rpc";
import { Health } from "@whc/contracts";
const port = 18151;
const env = { ...process.env, WHC_HOST: "127.0.0.1", WHC_CATALOG_PORT: String(port), WHC_DATA_DIR: "/tmp/rpclat-data" };
const child = spawn(process.execPath, ["/work/main/dist/catalog/main.js"], { env, stdio: ["ignore", "pipe", "inherit"] });
await new Promise((r) => child.stdout!.on("data", (c) => String(c).includes("ready") && r(null)));
const base = `http://127.0.0.1:${port}`;
async function time(name: string, n: number, fn: () => Promise<unknown>) {
  for (let i = 0; i < 300; i++) await fn();
  const ts: number[] = [];
  for (let i = 0; i < n; i++) { const s = performance.now(); await fn(); ts.push(performance.now() - s); }
  ts.sort((a, b) => a - b);
  console.log(`${name.padEnd(30)} p50 ${ts[n / 2]!.toFixed(3)} p90 ${ts[Math.floor(n * 0.9)]!.toFixed(3)} p99 ${ts[Math.floor(n * 0.99)]!.toFixed(3)} ms`);
}
const ours = createServiceClient(Health, createPeerTransport(base, 5000));
const plainGrpc = createClient(Health, createGrpcTransport({ baseUrl: base }));
const connect = createClient(Health, createConnectTransport({ baseUrl: base, httpVersion: "2" }));
const session = http2.connect(base);
const raw = () => new Promise<void>((resolve, reject) => {
  const req = session.request({ ":method": "POST", ":path": "/grpc.health.v1.Health/Check", "content-type": "application/grpc", te: "trailers" });
  req.on("data", () => {}); req.on("end", () => resolve()); req.on("error", reject);
  req.end(Buffer.from([0, 0, 0, 0, 0]));
});
for (let k = 0; k < 2; k++) {
  await time("raw http2 grpc frame", 2000, raw);
  await time("our client (grpc + interceptor)", 2000, () => ours.check({ service: "" }));
  await time("plain grpc transport", 2000, () => plainGrpc.check({ service: "" }));
  await time("connect protocol h2", 2000, () => connect.check({ service: "" }));
}
session.close();
child.kill();
