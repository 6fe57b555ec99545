import { afterEach, describe, expect, it, vi } from "vitest";
import net from "node:net";
import tls from "node:tls";
import { createClient } from "@connectrpc/connect";
import { ReplayService, type Endpoint } from "@whc/contracts";
import type { ConnectFunction, NetworkFailure } from "@whc/egress-guard";
import { openCapture } from "@whc/sealing";
import { appendCaptures } from "@whc/testing";
import { createForwarder } from "./forwarder.js";
import { createReplayService } from "./service.js";
import { onCleanup, runCleanups, serve, startBackends, startTarget, type Backends } from "./testing/index.js";

/*
 * Design §14, "No request kills a process": every way an outbound connection can fail ends as a
 * recorded outcome, for replay, relay, redeliver and proxy, through a host name (the pinned
 * lookup's path, where Node once connected and failed before anything listened) and through an
 * IP literal. Failures come from the kernel where loopback can give them (a refused port, a
 * broadcast address no socket may connect to, TLS spoken to a plain server, a silent server)
 * and from injected sockets otherwise (ENETUNREACH, EHOSTUNREACH, EACCES as a firewall gives
 * them): nothing here leaves the machine.
 */

afterEach(runCleanups);

interface FailureClass {
  name: string;
  /** The outcome recorded (network_failure_reason / attempt error). */
  reason: NetworkFailure;
  https?: boolean;
}

/** Ports the injected connect answers with a socket that fails as the kernel would; any other port connects for real. */
const INJECTED: Record<number, string> = { 61001: "ENETUNREACH", 61002: "EHOSTUNREACH", 61003: "EACCES", 61004: "EPERM" };

/**
 * Opens real connections, except to the injected ports, where it hands back a socket that is
 * destroyed with the error on the next tick: before Node's client attaches its listener, as a
 * synchronous connect failure does.
 */
const connect: ConnectFunction = (options, secure) => {
  const code = INJECTED[Number((options as { port?: number }).port)];
  if (!code) return secure ? tls.connect(options) : net.connect(options);
  const socket = new net.Socket();
  process.nextTick(() => socket.destroy(Object.assign(new Error(`connect ${code}`), { code, syscall: "connect" })));
  return socket;
};

/** Every name resolves to the address given for it; `nowhere.test` to nothing. */
const NAMES: Record<string, string> = { "dest.test": "127.0.0.1", "broadcast.test": "255.255.255.255" };
const resolver = async (name: string) => {
  const address = NAMES[name];
  if (!address) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: "ENOTFOUND" });
  return [{ address, family: 4 as const }];
};

/** A local server that accepts and never answers (the timeout class), and one that speaks plain HTTP (TLS refused). */
async function localServers() {
  const silent = net.createServer(() => undefined);
  await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
  const sockets = new Set<net.Socket>();
  silent.on("connection", (s) => sockets.add(s));
  onCleanup(() => {
    for (const s of sockets) s.destroy();
    return new Promise<void>((r) => silent.close(() => r()));
  });
  const plain = await startTarget();
  const refusing = await startTarget();
  await refusing.close();
  return { silentPort: (silent.address() as net.AddressInfo).port, plainPort: plain.port, refusedPort: refusing.port };
}

/** Each class as a URL through a host name and through an IP literal. */
async function targets() {
  const { silentPort, plainPort, refusedPort } = await localServers();
  const classes: (FailureClass & { host: string; ip: string; port: number })[] = [
    { name: "ENETUNREACH", reason: "host_unreachable", host: "dest.test", ip: "127.0.0.1", port: 61001 },
    { name: "EHOSTUNREACH", reason: "host_unreachable", host: "dest.test", ip: "127.0.0.1", port: 61002 },
    { name: "EACCES (a firewall)", reason: "host_unreachable", host: "dest.test", ip: "127.0.0.1", port: 61003 },
    { name: "EPERM", reason: "host_unreachable", host: "dest.test", ip: "127.0.0.1", port: 61004 },
    { name: "an address no socket may connect to (the kernel's own failure)", reason: "host_unreachable", host: "broadcast.test", ip: "255.255.255.255", port: 9 },
    { name: "ECONNREFUSED", reason: "connection_refused", host: "dest.test", ip: "127.0.0.1", port: refusedPort },
    { name: "timeout", reason: "timeout", host: "dest.test", ip: "127.0.0.1", port: silentPort },
    { name: "TLS error", reason: "tls_error", host: "dest.test", ip: "127.0.0.1", port: plainPort, https: true },
  ];
  const urls = classes.flatMap((c) => {
    const scheme = c.https ? "https" : "http";
    return [
      { ...c, spelling: "host name", url: `${scheme}://${c.host}:${c.port}/hook` },
      { ...c, spelling: "IP literal", url: `${scheme}://${c.ip}:${c.port}/hook` },
    ];
  });
  urls.push({ name: "DNS failure", reason: "dns_failure", host: "nowhere.test", ip: "", port: 80, spelling: "host name", url: "http://nowhere.test/hook" });
  return urls;
}

// Short, so the timeout class ends soon; long enough that a TLS refusal or a refused connection
// on a loaded machine (a full CI run beside it) is told before them: at 300/600 ms a TLS error
// once came back as a timeout.
const SHORT = { connectTimeoutMs: 1000, totalTimeoutMs: 2000 };

async function backends(): Promise<Backends> {
  return startBackends({ allowPrivate: true, resolver, connect });
}

async function capture(b: Backends, endpoint: Endpoint, relay: string | undefined) {
  const [appended] = await appendCaptures(b.catalog, b.sealer, [
    { accountId: endpoint.accountId, endpointId: endpoint.id, body: '{"id":"evt_1"}', ...(relay ? { forwardTarget: relay, forwardScheduled: true } : {}) },
  ]);
  return { accountId: endpoint.accountId, endpointId: endpoint.id, eventId: appended!.id };
}

const forwardJson = (url: string) => JSON.stringify({ url, keepPath: false, timeoutMs: SHORT.totalTimeoutMs, maxAttempts: 1 });

describe("no outbound failure escapes as an exception (design §14)", () => {
  it("replay answers each failure class as network_error with its reason, through a host name and an IP literal", async () => {
    const b = await backends();
    const replay = createClient(ReplayService, serve((r) => r.service(ReplayService, createReplayService(b.deps, { dailyLimit: 1000, maxExcerptBytes: 4096, ...SHORT }))));
    const ep = await b.createEndpoint({ operatingMode: "capture" });
    const ref = await capture(b, ep, undefined);
    for (const t of await targets()) {
      const res = await replay.replayEvent({ ...ref, targetUrl: t.url, keyId: "k" });
      expect({ target: `${t.name} via ${t.spelling}`, result: res.result, reason: res.networkFailureReason }).toEqual({
        target: `${t.name} via ${t.spelling}`,
        result: "network_error",
        reason: t.reason,
      });
    }
  });

  it("redeliver (manual) and proxy (initial) record each failure as the attempt's error and answer it", async () => {
    const b = await backends();
    const replay = createClient(ReplayService, serve((r) => r.service(ReplayService, createReplayService(b.deps, { dailyLimit: 1, maxExcerptBytes: 4096, ...SHORT }))));
    for (const t of await targets()) {
      for (const trigger of ["manual", "initial"] as const) {
        const ep = await b.createEndpoint({ operatingMode: trigger === "manual" ? "relay" : "proxy", forwardJson: forwardJson(t.url) });
        const ref = await capture(b, ep, undefined);
        const { attempt } = await replay.forwardEvent({ ...ref, trigger, maxResponseBytes: 0 });
        const label = `${t.name} via ${t.spelling}, ${trigger}`;
        expect({ label, error: attempt?.error, status: attempt?.status }).toEqual({ label, error: t.reason, status: 0 });
        const { event } = await b.catalog.getEvent({ ...ref, markRead: false });
        expect({ label, errors: event!.deliveries[0]!.attempts.map((a) => a.error) }).toEqual({ label, errors: [t.reason] });
      }
    }
  });

  it("the relay worker records each failure as an attempt and ends the delivery, and keeps working", async () => {
    const b = await backends();
    const refs: { label: string; reason: string; ref: Awaited<ReturnType<typeof capture>> }[] = [];
    for (const t of await targets()) {
      const ep = await b.createEndpoint({ operatingMode: "relay", forwardJson: forwardJson(t.url) });
      refs.push({ label: `${t.name} via ${t.spelling}`, reason: t.reason, ref: await capture(b, ep, t.url) });
    }
    const forwarder = createForwarder({ ...b.deps, bus: b.bus }, { connectTimeoutMs: SHORT.connectTimeoutMs, retryBaseMs: 20, pollMs: 50, claimMs: 10_000 });
    forwarder.start();
    onCleanup(() => forwarder.stop());
    for (const { label, reason, ref } of refs) {
      const event = await vi.waitFor(
        async () => {
          const { event } = await b.catalog.getEvent({ ...ref, markRead: false });
          if (event!.forward?.state === "pending") throw new Error(`${label}: still pending`);
          return event!;
        },
        { timeout: 15_000, interval: 25 },
      );
      // maxAttempts 1: a retryable failure exhausts the delivery at once, recorded with its reason.
      expect({ label, state: event.forward!.state, errors: event.deliveries[0]!.attempts.map((a) => a.error) }).toEqual({ label, state: "exhausted", errors: [reason] });
    }
  });

  it("a relay whose sender dies mid-send spends its attempts all the same: exhausted (interrupted), never sent again", async () => {
    const b = await backends();
    const destination = await startTarget();
    const ep = await b.createEndpoint({ operatingMode: "relay", forwardJson: JSON.stringify({ url: `${destination.url}/hook`, maxAttempts: 3 }) });
    const ref = await capture(b, ep, `${destination.url}/hook`);
    // A worker that claims and dies before recording, three times (each claim lapses after 20 ms).
    for (let i = 0; i < 3; i += 1) {
      const { deliveries } = await b.catalog.claimDeliveries({ owner: `crashed-${i}`, limit: 10, claimMs: 20n });
      expect(deliveries.map((d) => [d.eventId, d.attempt])).toEqual([[ref.eventId, i + 1]]);
      await new Promise((r) => setTimeout(r, 30));
    }
    const forwarder = createForwarder({ ...b.deps, bus: b.bus }, { connectTimeoutMs: 1000, retryBaseMs: 20, pollMs: 20, claimMs: 10_000 });
    forwarder.start();
    onCleanup(() => forwarder.stop());
    const event = await vi.waitFor(
      async () => {
        const { event } = await b.catalog.getEvent({ ...ref, markRead: false });
        if (event!.forward?.state === "pending") throw new Error("still pending");
        return event!;
      },
      { timeout: 15_000, interval: 20 },
    );
    expect(event.forward!.state).toBe("exhausted");
    expect(event.deliveries[0]!.attempts.map((a) => [a.n, a.error])).toEqual([[4, "interrupted"]]);
    // Its URL is sealed under the capture's key like every recorded URL, and reads back whole.
    expect(event.deliveries[0]!.attempts[0]!.url).toMatch(/^whc-sealed:/);
    expect((await openCapture(b.opener, event)).event.deliveries[0]!.attempts[0]!.url).toBe(`${destination.url}/hook`);
    expect(destination.received).toHaveLength(0);
  });
});
