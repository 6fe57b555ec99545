import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { createLogger } from "@whc/logging";
import { startNatsServer, waitFor, type NatsServer } from "@whc/testing";
import { connect, JSONCodec } from "nats";
import type { EventSummaryJson } from "@whc/api-model";
import { createMemoryBus } from "./memory-bus.js";
import { createNatsBus } from "./nats-bus.js";
import { createNatsConnection } from "./nats-connection.js";
import type { CaptureBus, CaptureNotice } from "@whc/ports";

const logger = createLogger("test", "silent");
const summary = (id: string): EventSummaryJson => ({
  id,
  endpointId: "ep",
  receivedAt: new Date(0).toISOString(),
  method: "POST",
  provider: "generic",
  verification: "unverified",
  responseCode: 200,
  truncated: false,
  originalSizeBytes: 1,
  decryption: "ok",
});

function busContract(name: string, make: () => Promise<{ pub: CaptureBus; sub: CaptureBus; done(): Promise<void> }>) {
  describe(`capture bus: ${name}`, () => {
    it("delivers a capture only to subscribers of that account and endpoint", async () => {
      const { pub, sub, done } = await make();
      try {
        const got: CaptureNotice[] = [];
        const other: CaptureNotice[] = [];
        const off = sub.subscribeCaptures("acct", "ep1", (n) => got.push(n));
        const offOther = sub.subscribeCaptures("acct", "ep2", (n) => other.push(n));
        await new Promise((r) => setTimeout(r, 100));
        pub.publishCapture({ accountId: "acct", endpointId: "ep1", summary: summary("e1") });
        await waitFor(() => got.length === 1, { what: "notice" });
        expect(got[0]).toMatchObject({ accountId: "acct", endpointId: "ep1", summary: { id: "e1" } });
        expect(other).toEqual([]);
        off();
        offOther();
        pub.publishCapture({ accountId: "acct", endpointId: "ep1", summary: summary("e2") });
        await new Promise((r) => setTimeout(r, 100));
        expect(got).toHaveLength(1);
      } finally {
        await done();
      }
    });

    it("says whether a capture's notice would reach anyone, or leaves it to the publisher to send", async () => {
      const { pub, sub, done } = await make();
      try {
        if (pub.kind !== "memory") {
          // Subscribers in other processes are not known here: the publisher always publishes.
          expect(pub.listensToCaptures).toBeUndefined();
          return;
        }
        expect(pub.listensToCaptures?.("acct", "ep1")).toBe(false);
        const off = sub.subscribeCaptures("acct", "ep1", () => undefined);
        expect(pub.listensToCaptures?.("acct", "ep1")).toBe(true);
        expect(pub.listensToCaptures?.("acct", "ep2")).toBe(false);
        off();
        expect(pub.listensToCaptures?.("acct", "ep1")).toBe(false);
      } finally {
        await done();
      }
    });

    it("carries endpoint changes", async () => {
      const { pub, sub, done } = await make();
      try {
        const changed: string[] = [];
        sub.subscribeEndpointChanges((id) => changed.push(id));
        await new Promise((r) => setTimeout(r, 100));
        pub.publishEndpointChanged("ep9");
        await waitFor(() => changed.includes("ep9"), { what: "change" });
      } finally {
        await done();
      }
    });
  });
}

busContract("in-process", async () => {
  const bus = createMemoryBus();
  return { pub: bus, sub: bus, done: () => bus.close() };
});

describe("NATS", () => {
  let nats: NatsServer;
  beforeAll(async () => {
    nats = await startNatsServer();
  });
  afterAll(async () => {
    await nats.stop();
  });

  busContract("NATS, two connections", async () => {
    const pub = createNatsBus(createNatsConnection(nats.url, "pub", logger), logger);
    const sub = createNatsBus(createNatsConnection(nats.url, "sub", logger), logger);
    await waitFor(() => pub.connected() && sub.connected(), { what: "nats" });
    return { pub, sub, done: async () => (await pub.close(), await sub.close()) };
  });

  it("publishes on whc.capture.<accountId>.<endpointId> with the summary as JSON", async () => {
    const bus = createNatsBus(createNatsConnection(nats.url, "pub", logger), logger);
    const nc = await connect({ servers: nats.url });
    const codec = JSONCodec();
    const received: { subject: string; data: unknown }[] = [];
    nc.subscribe("whc.capture.>", { callback: (_e, m) => received.push({ subject: m.subject, data: codec.decode(m.data) }) });
    await nc.flush();
    await waitFor(() => bus.connected(), { what: "bus" });
    bus.publishCapture({ accountId: "a1", endpointId: "e1", summary: summary("x") });
    await waitFor(() => received.length === 1, { what: "message" });
    expect(received[0]).toEqual({ subject: "whc.capture.a1.e1", data: summary("x") });
    await nc.close();
    await bus.close();
  });

  it("never throws while NATS is down and recovers by itself when it returns", async () => {
    const local = await startNatsServer();
    const pub = createNatsBus(createNatsConnection(local.url, "pub", logger), logger);
    const sub = createNatsBus(createNatsConnection(local.url, "sub", logger), logger);
    const got: string[] = [];
    sub.subscribeCaptures("a", "e", (n) => got.push(n.summary.id));
    await waitFor(() => pub.connected() && sub.connected(), { what: "connect" });
    await local.pause();
    await waitFor(() => !pub.connected(), { what: "disconnect" });
    expect(() => pub.publishCapture({ accountId: "a", endpointId: "e", summary: summary("lost") })).not.toThrow();
    await local.resume();
    await waitFor(() => pub.connected() && sub.connected(), { what: "reconnect", timeoutMs: 20_000 });
    await waitFor(
      () => {
        pub.publishCapture({ accountId: "a", endpointId: "e", summary: summary("back") });
        return got.includes("back");
      },
      { what: "delivery after reconnect", intervalMs: 200 },
    );
    await pub.close();
    await sub.close();
    await local.stop();
  }, 40_000);
});
