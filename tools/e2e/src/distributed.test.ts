import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { connect, JSONCodec, type NatsConnection } from "nats";
import {
  apiClient,
  buildApps,
  freePort,
  startNatsServer,
  startNode,
  tempDir,
  waitFor,
  type NatsServer,
  type RunningProcess,
} from "@whc/testing";
import { walkReadmePath } from "./walkthrough.js";

const KEY = `whc_${"D".repeat(20)}${"7".repeat(20)}`;
const SERVICES = ["catalog", "crypto", "replay", "ingest", "gateway"] as const;

let nats: NatsServer;
let dir: ReturnType<typeof tempDir>;
const procs: RunningProcess[] = [];
let gatewayUrl: string;
let ingestUrl: string;

beforeAll(async () => {
  const mains = buildApps(...SERVICES);
  nats = await startNatsServer();
  dir = tempDir("whc-e2e-dist-");
  const ports = Object.fromEntries(await Promise.all(SERVICES.map(async (s) => [s, await freePort()] as const)));
  gatewayUrl = `http://127.0.0.1:${ports.gateway}`;
  ingestUrl = `http://127.0.0.1:${ports.ingest}`;
  const env = {
    WHC_HOST: "127.0.0.1",
    WHC_DATA_DIR: dir.path,
    WHC_NATS_URL: nats.url,
    WHC_BOOTSTRAP_API_KEYS: `dist:${KEY}`,
    WHC_CATALOG_PORT: String(ports.catalog),
    WHC_CRYPTO_PORT: String(ports.crypto),
    WHC_REPLAY_PORT: String(ports.replay),
    WHC_INGEST_PORT: String(ports.ingest),
    WHC_GATEWAY_PORT: String(ports.gateway),
    WHC_CATALOG_URL: `http://127.0.0.1:${ports.catalog}`,
    WHC_CRYPTO_URL: `http://127.0.0.1:${ports.crypto}`,
    WHC_REPLAY_URL: `http://127.0.0.1:${ports.replay}`,
    WHC_INGEST_PUBLIC_URL: ingestUrl,
  };
  for (const s of SERVICES) procs.push(startNode(mains[s]!, env));
  await Promise.all(procs.map((p, i) => p.waitForOutput(new RegExp(`${SERVICES[i]} ready`))));
  await waitFor(async () => (await fetch(`${gatewayUrl}/healthz`)).status === 200 || undefined, { what: "gateway health" });
  await waitFor(async () => (await fetch(`${ingestUrl}/healthz`)).status === 200 || undefined, { what: "ingest health" });
});

afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop()));
  await nats?.stop();
  dir?.remove();
});

describe("distributed processes (five services, Connect over h2c, NATS)", () => {
  it("walk the README path, and ingest publishes the capture on NATS", async () => {
    let nc: NatsConnection | undefined;
    try {
      nc = await connect({ servers: nats.url });
      const codec = JSONCodec<{ id: string; endpointId: string; method: string }>();
      const seen: { subject: string; data: { id: string; endpointId: string; method: string } }[] = [];
      nc.subscribe("whc.capture.>", { callback: (_e, m) => seen.push({ subject: m.subject, data: codec.decode(m.data) }) });
      await nc.flush();
      const { endpoint, eventId } = await walkReadmePath(apiClient(gatewayUrl, KEY));
      await waitFor(() => seen.length > 0, { what: "capture notification" });
      expect(seen[0]!.subject).toMatch(new RegExp(`^whc\\.capture\\.[0-9a-f-]{36}\\.${endpoint.id}$`));
      expect(seen[0]!.data).toMatchObject({ id: eventId, endpointId: endpoint.id, method: "POST" });
      expect(JSON.stringify(seen[0]!.data)).not.toContain("opened");
    } finally {
      await nc?.close();
    }
  });

  it("report every dependency healthy", async () => {
    const health = (await (await fetch(`${gatewayUrl}/healthz`)).json()) as { checks: Record<string, string> };
    expect(health.checks).toEqual({ catalog: "ok", crypto: "ok", replay: "ok", bus: "ok" });
  });

  it("drain and exit 0 on SIGTERM", async () => {
    const gateway = procs[SERVICES.indexOf("gateway")]!;
    expect(await gateway.stop("SIGTERM")).toBe(0);
    expect(gateway.output()).toContain("gateway stopped");
  });
});
