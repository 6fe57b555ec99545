import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { apiClient, gatedDestination, startNode, waitFor } from "@whc/testing";
import { startCluster, type Cluster } from "./cluster.js";
import { startSingleProcess, type SingleProcess } from "./single-process.js";
import { expectDeliveredOnce, runFilterTable, startFanOut } from "./routing-scenario.js";

/**
 * Routing across real processes (design §17): ingest routes each capture to the destinations
 * whose filters it matches, and the replay processes deliver each delivery on its own. The
 * claim time is shortened by configuration, never slept through; a destination holds requests
 * (gated) so that a sender is killed while its attempts are in flight.
 */

const ENV = {
  WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true",
  // The checks read every event's deliveries at each poll: more than a key's default request rate.
  WHC_QUOTA_API_RPS: "5000",
  WHC_FORWARD_RETRY_BASE_MS: "100",
  WHC_FORWARD_POLL_MS: "100",
  // The claims of the process that is killed: short, to be waited out.
  WHC_FORWARD_CLAIM_MS: "4000",
  // Every delivery may be in flight at once (a replay process sends 32 at most).
  WHC_EGRESS_SLOTS_PER_ORIGIN: "64",
};
/**
 * The surviving replica's claims outlast the test: it never takes again what it still holds
 * at a gate, so whatever it sends is sent once, and only the killed one's attempts are redone.
 */
const SURVIVOR_CLAIM_MS = "120000";
/** Captures of the fan-out: half go to both destinations. More than one replay process sends at once (32). */
const CAPTURES = 30;
const DELIVERIES = CAPTURES + CAPTURES / 2;

describe("routing across processes: two replay replicas", () => {
  let cluster: Cluster;
  let second: Awaited<ReturnType<Cluster["extra"]>>;
  beforeAll(async () => {
    cluster = await startCluster(ENV);
    second = await cluster.extra("replay", { WHC_FORWARD_CLAIM_MS: SURVIVOR_CLAIM_MS });
  }, 120_000);
  afterAll(async () => {
    await second?.proc.stop();
    await cluster?.shutdown();
  });

  it("runs the filter operator table in ingest: each capture's deliveries go to exactly the destinations it matches", async () => {
    const sink = await gatedDestination();
    try {
      await runFilterTable(cluster.api, sink.url);
    } finally {
      await sink.close();
    }
  }, 90_000);

  it("fans out, filtered and transformed; a SIGKILL of one replica mid-fan-out loses and duplicates nothing", async () => {
    const fan = await startFanOut(cluster.api, CAPTURES);
    try {
      // Every delivery in flight: one replica holds at most 32, so both hold some.
      await waitFor(() => new Set([...fan.billing.received, ...fan.audit.received].map((r) => `${r.url} ${r.deliveryId}`)).size === DELIVERIES || undefined, {
        what: "every delivery in flight",
        timeoutMs: 30_000,
      });
      expect(await cluster.stop("replay", "SIGKILL")).toBe(null);
      // The dead replica's connections closed with it: its attempts held now are abandoned
      // (never acted on); the survivor's are answered, and it takes the dead one's deliveries
      // under the next number once their claims end.
      await fan.billing.settle();
      await fan.audit.settle();
      fan.billing.open();
      fan.audit.open();
      await expectDeliveredOnce(cluster.api, fan);
      // The killed replica's attempts reached the destinations, and were abandoned, never acted on twice.
      expect(fan.billing.abandoned.length + fan.audit.abandoned.length).toBeGreaterThan(0);
    } finally {
      await fan.close();
    }
  }, 120_000);
});

describe("routing in the all-in-one process", () => {
  let aio: SingleProcess;
  const key = `whc_${"R".repeat(20)}${"5".repeat(20)}`;
  beforeAll(async () => {
    aio = await startSingleProcess("whc-e2e-routing-", { ...ENV, WHC_BOOTSTRAP_API_KEYS: `routing:${key}` });
  }, 120_000);
  afterAll(async () => {
    await aio?.stop();
  });

  it("runs the filter operator table in ingest", async () => {
    const sink = await gatedDestination();
    try {
      await runFilterTable(apiClient(aio.gatewayUrl, key), sink.url);
    } finally {
      await sink.close();
    }
  }, 90_000);

  it("fans out; a SIGKILL of the process mid-fan-out loses and duplicates nothing after it starts again", async () => {
    const api = apiClient(aio.gatewayUrl, key);
    const fan = await startFanOut(api, CAPTURES);
    try {
      await waitFor(() => new Set([...fan.billing.received, ...fan.audit.received].map((r) => `${r.url} ${r.deliveryId}`)).size === DELIVERIES || undefined, {
        what: "every delivery in flight",
        timeoutMs: 30_000,
      });
      expect(await aio.proc.stop("SIGKILL")).toBe(null);
      // Everything held was sent by the dead process: abandoned, never acted on.
      await fan.billing.settle();
      await fan.audit.settle();
      const lost = fan.billing.held() + fan.audit.held();
      expect(fan.billing.heldGone() + fan.audit.heldGone()).toBe(lost);
      fan.billing.open();
      fan.audit.open();
      expect(fan.billing.abandoned.length + fan.audit.abandoned.length).toBe(lost);
      expect(lost).toBeGreaterThanOrEqual(DELIVERIES);
      aio.proc = startNode(aio.main, aio.env);
      await aio.proc.waitForOutput(/webhook-capture ready/);
      await expectDeliveredOnce(api, fan);
    } finally {
      await fan.close();
    }
  }, 120_000);
});
