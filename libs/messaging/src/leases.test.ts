import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { createLogger } from "@whc/logging";
import { startNatsServer, waitFor, type NatsServer } from "@whc/testing";
import type { EgressLeases } from "@whc/ports";
import { createMemoryLeases, createNatsLeases } from "./leases.js";
import { createNatsConnection } from "./nats-connection.js";

const logger = createLogger("test", "silent");

function leaseContract(name: string, make: (slots: number, ttlS: number) => Promise<EgressLeases[]>) {
  describe(`egress leases: ${name}`, () => {
    it("hands out at most N slots per origin, across holders, and frees them on release", async () => {
      const [a, b] = await make(2, 30);
      const l1 = await a!.acquire("https://t.example:443");
      const l2 = await b!.acquire("https://t.example:443");
      expect(l1 && l2).toBeTruthy();
      expect(l1!.key).not.toBe(l2!.key);
      expect(await a!.acquire("https://t.example:443")).toBeUndefined();
      expect(await b!.acquire("https://other.example:443")).toBeDefined();
      await l1!.release();
      expect(await b!.acquire("https://t.example:443")).toBeDefined();
      for (const l of [a, b]) await l!.close();
    });

    it("lets a lease expire by itself when its holder never releases it", async () => {
      const [a] = await make(1, 1);
      expect(await a!.acquire("http://slow.example")).toBeDefined();
      expect(await a!.acquire("http://slow.example")).toBeUndefined();
      await waitFor(async () => (await a!.acquire("http://slow.example")) ?? undefined, {
        timeoutMs: 8000,
        intervalMs: 250,
        what: "expiry",
      });
      await a!.close();
    }, 15_000);
  });
}

leaseContract("in-process", async (slots, ttlS) => {
  const leases = createMemoryLeases({ slotsPerOrigin: slots, ttlMs: ttlS * 1000 });
  return [leases, leases];
});

describe("NATS KV", () => {
  let nats: NatsServer;
  beforeAll(async () => {
    nats = await startNatsServer();
  });
  afterAll(async () => {
    await nats.stop();
  });

  let buckets = 0;
  leaseContract("NATS KV, two processes' worth of connections", async (slots, ttlS) => {
    // A bucket's max age is fixed when it is created: one bucket per case.
    const bucket = `whc_leases_test_${(buckets += 1)}`;
    const make = () => {
      const handle = createNatsConnection(nats.url, "leases", logger);
      return createNatsLeases(handle, { slotsPerOrigin: slots, ttlS, bucket }, logger);
    };
    const pair = [make(), make()];
    await waitFor(() => pair.every((l) => l.connected()), { what: "connect" });
    return pair;
  });

  it("fails closed while NATS is down", async () => {
    const local = await startNatsServer();
    const leases = createNatsLeases(createNatsConnection(local.url, "l", logger), { slotsPerOrigin: 4, ttlS: 30 }, logger);
    await waitFor(() => leases.connected(), { what: "connect" });
    expect(await leases.acquire("http://x.example")).toBeDefined();
    await local.pause();
    await waitFor(() => !leases.connected(), { what: "disconnect" });
    expect(await leases.acquire("http://x.example")).toBeUndefined();
    await local.resume();
    await waitFor(async () => (await leases.acquire("http://x.example")) ?? undefined, { what: "recovery", timeoutMs: 20_000, intervalMs: 250 });
    await leases.close();
    await local.stop();
  }, 40_000);
});
