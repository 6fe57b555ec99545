import { describe, it, expect, afterEach } from "vitest";
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { CatalogService, CapturedEventSchema, decodeCapturedEvents } from "@whc/contracts";
import { createCatalogService, type CatalogStore } from "@whc/catalog-core";
import { openSqliteStore } from "@whc/catalog-sqlite";
import { createLogger } from "@whc/logging";
import { createInMemoryTransport, createServiceClient } from "@whc/rpc";
import { header } from "@whc/signatures";
import { createAppendBatcher } from "./batcher.js";
import { bodyReservation, readBodyThen, remoteIpOf, rawHeaderPairs, type ReadBody } from "./request.js";
import { createInflightBudget, type Reservation } from "./budget.js";

const readBody = (req: http.IncomingMessage, keep: number, limit: number) => {
  const reservation = createInflightBudget(Number.MAX_SAFE_INTEGER).reserve(bodyReservation(req, limit)) as Reservation;
  return new Promise<ReadBody>((resolve, reject) =>
    readBodyThen(req, { keep, limit, idleMs: 0 }, reservation, (err, body) => (err ? reject(err) : resolve(body as ReadBody))),
  );
};

const servers: http.Server[] = [];
afterEach(() => servers.splice(0).forEach((s) => s.close()));

/** A real HTTP server that hands each request to `inspect` and answers 200. */
async function serve(inspect: (req: http.IncomingMessage) => Promise<unknown>) {
  const results: unknown[] = [];
  const server = http.createServer(async (req, res) => {
    results.push(await inspect(req));
    res.end("ok");
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, results };
}

describe("reading a capture", () => {
  it("keeps at most `keep` bytes for storing, and the whole body for judging it", async () => {
    const { url, results } = await serve((req) => readBody(req, 5, 100));
    await fetch(url, { method: "POST", body: "0123456789" });
    const r = results[0] as ReadBody;
    expect(r.kept.toString()).toBe("01234");
    expect(r.whole.toString()).toBe("0123456789");
    expect(r.total).toBe(10);
    expect(r.overLimit).toBe(false);
  });

  it("flags bodies over the limit", async () => {
    const { url, results } = await serve((req) => readBody(req, 5, 8));
    await fetch(url, { method: "POST", body: "0123456789" }).catch(() => undefined);
    expect((results[0] as ReadBody).overLimit).toBe(true);
  });

  it("keeps header names, order and repeats as sent", async () => {
    const { url, results } = await serve(async (req) => rawHeaderPairs(req));
    const { port } = new URL(url);
    await new Promise<void>((resolve, reject) => {
      const socket = net.connect(Number(port), "127.0.0.1", () => {
        socket.write("POST / HTTP/1.1\r\nHost: x\r\nX-B: 1\r\nx-a: 2\r\nX-B: 3\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      });
      socket.on("data", () => undefined);
      socket.on("end", resolve);
      socket.on("error", reject);
    });
    const pairs = (results[0] as [string, string][]).filter(([n]) => n.toLowerCase().startsWith("x-"));
    expect(pairs).toEqual([
      ["X-B", "1"],
      ["x-a", "2"],
      ["X-B", "3"],
    ]);
  });

  it("answers header lookups with a name's first line, whether names repeat or not, and never a prototype's member", async () => {
    // Looked up as the request arrives: the list is indexed through Node's headers object when no name repeats.
    const { url, results } = await serve(async (req) => {
      const pairs = rawHeaderPairs(req);
      return ["x-b", "X-A", "stripe-signature", "set-cookie", "constructor", "toString", "absent"].map((name) => header(pairs, name));
    });
    const { port } = new URL(url);
    const send = (lines: string) =>
      new Promise<void>((resolve, reject) => {
        const socket = net.connect(Number(port), "127.0.0.1", () => socket.write(`POST / HTTP/1.1\r\nHost: x\r\n${lines}Content-Length: 0\r\nConnection: close\r\n\r\n`));
        socket.on("data", () => undefined);
        socket.on("end", resolve);
        socket.on("error", reject);
      });
    await send("X-B:  1 \r\nx-a: 2\r\nStripe-Signature: t=1,v1=ab\r\nSet-Cookie: c=d\r\n");
    await send("X-B: 1\r\nx-a: 2\r\nX-B: 3\r\nSet-Cookie: c=d\r\nset-cookie: e=f\r\n");
    await send("Constructor: built\r\nX-A: 4\r\n");
    expect(results).toEqual([
      ["1", "2", "t=1,v1=ab", "c=d", undefined, undefined, undefined],
      ["1", "2", undefined, "c=d", undefined, undefined, undefined],
      [undefined, "4", undefined, undefined, "built", undefined, undefined],
    ]);
  });

  it("trusts X-Forwarded-For only from configured proxies", async () => {
    const { url, results } = await serve(async (req) => [
      remoteIpOf(req, new Set()),
      remoteIpOf(req, new Set(["127.0.0.1"])),
      remoteIpOf(req, new Set(["127.0.0.1", "203.0.113.9"])),
    ]);
    await fetch(url, { headers: { "x-forwarded-for": "198.51.100.7, 203.0.113.9" } });
    expect(results[0]).toEqual(["127.0.0.1", "203.0.113.9", "198.51.100.7"]);
  });

  it("reads X-Forwarded-For entries that carry a port", async () => {
    const { url, results } = await serve(async (req) => remoteIpOf(req, new Set(["127.0.0.1"])));
    await fetch(url, { headers: { "x-forwarded-for": "198.51.100.7:4711" } });
    await fetch(url, { headers: { "x-forwarded-for": "[2001:db8::7]:4711" } });
    await fetch(url, { headers: { "x-forwarded-for": "[2001:db8::8]" } });
    expect(results).toEqual(["198.51.100.7", "2001:db8::7", "2001:db8::8"]);
  });
});

/**
 * A real catalog service over an in-memory store whose appends take `callMs` each, as a
 * remote catalog's would; `batches` records the size of every call.
 */
async function slowCatalog(callMs: number) {
  const store: CatalogStore = openSqliteStore({ file: ":memory:" });
  const batches: number[] = [];
  const append = store.appendEvents.bind(store);
  store.appendEvents = async (events, stamp) => {
    batches.push(events.length);
    await new Promise((r) => setTimeout(r, callMs));
    return append(events, stamp);
  };
  const { key } = await store.ensureApiKey("a", new Uint8Array(32), "p", 1);
  const endpoint = await store.createEndpoint({
    id: "01a20000-0000-7000-8000-0000000000aa",
    accountId: key.accountId,
    slug: "s",
    displayName: "s",
    operatingMode: "capture",
    status: "active",
    replayFromDashboard: true,
    replayFromApi: true,
    provider: "generic",
    genericSignatureHeader: "",
    genericSignaturePrefix: "",
    source: "api",
    createdAt: 1,
    updatedAt: 1,
    eventCount: 0,
    purgedEventCount: 0,
  });
  const routes = (router: Parameters<Parameters<typeof createInMemoryTransport>[0]>[0]) => router.service(CatalogService, createCatalogService(store));
  const catalog = createServiceClient(CatalogService, createInMemoryTransport(routes, createLogger("t", "silent"), 5000));
  const event = () => create(CapturedEventSchema, { accountId: key.accountId, endpointId: endpoint.id, method: "POST" });
  return { store, endpoint, catalog, batches, event };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("group commit", () => {
  it("sends what queues during one call in the next call, and answers each sender", async () => {
    const { store, endpoint, catalog, batches, event } = await slowCatalog(20);
    const batcher = createAppendBatcher(catalog, { maxEvents: 100, maxBytes: 1 << 20 });
    const results = await Promise.all(Array.from({ length: 50 }, () => batcher.append(event())));
    expect(new Set(results.map((r) => ("id" in r ? r.id : undefined))).size).toBe(50);
    // All 50 arrive in one turn of the event loop: they share one call and one transaction.
    expect(batches.length).toBeLessThan(3);
    expect(batches[0]).toBeGreaterThan(1);
    expect(batches.reduce((a, b) => a + b, 0)).toBe(50);
    expect((await store.getEndpoint(endpoint.id))?.eventCount).toBe(50);
    await store.close();
  });

  /**
   * Ten senders each send a capture, and again 20 ms after their answer (the network between:
   * long enough that a flush without linger goes first even on a loaded machine, where 3 ms
   * once was not); five more send theirs while the first call (50 ms) is in flight: once the
   * store has it (a fixed 10 ms after the start once came before the first call on a loaded
   * machine, and the five joined it).
   */
  async function twoGroups(lingerMs: number) {
    const { store, catalog, batches, event } = await slowCatalog(50);
    const batcher = createAppendBatcher(catalog, { maxEvents: 100, maxBytes: 1 << 20, lingerMs });
    const sender = async () => {
      await batcher.append(event());
      await sleep(20);
      await batcher.append(event());
    };
    const firstCall = async () => {
      while (batches.length === 0) await sleep(1);
    };
    const late = firstCall().then(() => Promise.all(Array.from({ length: 5 }, () => batcher.append(event()))));
    await Promise.all([...Array.from({ length: 10 }, sender), late]);
    await store.close();
    return batches;
  }

  it("when a call returns with captures waiting, waits for the senders it answered, so both groups share the next call", async () => {
    expect(await twoGroups(200)).toEqual([10, 15]);
  });

  it("sends the waiting captures at once without a linger, and the answered senders' in a call of their own", async () => {
    expect(await twoGroups(0)).toEqual([10, 5, 10]);
  });

  it("waits no longer than its linger when the answered senders do not come back", async () => {
    const { store, catalog, batches, event } = await slowCatalog(20);
    const batcher = createAppendBatcher(catalog, { maxEvents: 100, maxBytes: 1 << 20, lingerMs: 30 });
    const first = batcher.append(event());
    await sleep(5);
    const waiting = batcher.append(event());
    await first;
    const answeredAt = performance.now();
    await waiting;
    // 30 ms of linger, then the 20 ms call: not sooner (it lingered), not much later.
    expect(performance.now() - answeredAt).toBeGreaterThanOrEqual(48);
    expect(performance.now() - answeredAt).toBeLessThan(200);
    expect(batches).toEqual([1, 1]);
    await store.close();
  });

  it("sends captures encoded in one field when told to (a catalog in another process), and reads the answer encoded or not, stored the same as sent as messages", async () => {
    const { store, endpoint, catalog, event } = await slowCatalog(0);
    const sent: string[] = [];
    let olderCatalog = false;
    const recording: typeof catalog = {
      ...catalog,
      appendEvents: async (req, options) => {
        // A catalog built before encode_answer does not read it, and answers `events`.
        const res = await catalog.appendEvents(olderCatalog ? { ...req, encodeAnswer: false } : req, options);
        const answer = res.encodedEvents.length > 0 ? "encoded" : `${res.events.length} as messages`;
        sent.push(`${req.captures?.length ?? 0} as messages, ${req.encodedCaptures?.length ? "some" : "none"} encoded; answer ${answer}`);
        return res;
      },
    };
    const stored = [];
    for (const [encodeCaptures, older] of [
      [true, false],
      [false, false],
      [true, true],
    ]) {
      olderCatalog = older as boolean;
      const batcher = createAppendBatcher(recording, { maxEvents: 100, maxBytes: 1 << 20, encodeCaptures: encodeCaptures as boolean });
      const detail = { remoteIp: "203.0.113.9", canonicalEventType: "ünicode.event", diagnosticJson: '{"bodyIs":"json"}', responseCode: 202 };
      const [a] = await Promise.all([0, 1].map(() => batcher.append(create(CapturedEventSchema, { ...event(), ...detail }))));
      const got = await catalog.getEvent({ accountId: endpoint.accountId, endpointId: endpoint.id, eventId: a && "id" in a ? a.id : "" });
      stored.push({ ...got.event, id: "", receivedAtMs: 0n });
    }
    expect(sent).toEqual([
      "0 as messages, some encoded; answer encoded",
      "2 as messages, none encoded; answer 2 as messages",
      "0 as messages, some encoded; answer 2 as messages",
    ]);
    expect(stored[0]).toMatchObject({ method: "POST", remoteIp: "203.0.113.9", canonicalEventType: "ünicode.event", responseCode: 202 });
    expect(stored[0]).toEqual(stored[1]);
    expect(stored[0]).toEqual(stored[2]);
    await store.close();
  });

  it("writes each call's encoded captures into the memory of the last answered call, never into a failed call's", async () => {
    const { store, catalog, event } = await slowCatalog(0);
    const calls: { bytes: Uint8Array; copy: Buffer; bodies: string[] }[] = [];
    let failNext = false;
    const recording: typeof catalog = {
      ...catalog,
      appendEvents: (req, options) => {
        const bytes = req.encodedCaptures as Uint8Array;
        calls.push({ bytes, copy: Buffer.from(bytes), bodies: decodeCapturedEvents(bytes).map((c) => Buffer.from(c.body ?? []).toString()) });
        if (failNext) {
          failNext = false;
          // As a deadline does: the call fails while its request may still be on its way.
          return Promise.reject(new Error("deadline exceeded"));
        }
        return catalog.appendEvents(req, options);
      },
    };
    const batcher = createAppendBatcher(recording, { maxEvents: 100, maxBytes: 1 << 20, encodeCaptures: true });
    // A body is stored with its (sealed) data key: any bytes will do for the catalog.
    const sealed = (body: string) => create(CapturedEventSchema, { ...event(), body: Buffer.from(body), wrappedKey: new Uint8Array(60).fill(7), keyId: "k1" });
    const send = (...bodies: string[]) => Promise.allSettled(bodies.map((b) => batcher.append(sealed(b))));
    const big = (c: string) => c.repeat(3000);
    const stored = async (...bodies: string[]) => (await send(...bodies)).map((r) => r.status);
    expect(await stored(big("a"), big("b"), big("c"))).toEqual(["fulfilled", "fulfilled", "fulfilled"]);
    expect(await stored(big("d"), "e")).toEqual(["fulfilled", "fulfilled"]);
    failNext = true;
    expect(await stored(big("f"), big("g"))).toEqual(["rejected", "rejected"]);
    expect(await stored(big("h"), big("i"), big("j"))).toEqual(["fulfilled", "fulfilled", "fulfilled"]);
    expect(await stored("k")).toEqual(["fulfilled"]);
    expect(calls.map((c) => c.bodies.map((b) => b.slice(0, 1)).join(""))).toEqual(["abc", "de", "fg", "hij", "k"]);
    const memory = calls.map((c) => c.bytes.buffer);
    // Answered calls lend their memory to the next; the failed one keeps its own, untouched.
    expect(memory[1]).toBe(memory[0]);
    expect(memory[2]).toBe(memory[1]);
    expect(memory[3]).not.toBe(memory[2]);
    expect(memory[4]).toBe(memory[3]);
    expect(Buffer.from(calls[2]?.bytes ?? []).equals(calls[2]?.copy ?? Buffer.alloc(0))).toBe(true);
    await store.close();
  });

  it("sends a capture that arrives with nothing in flight on the next turn, whatever its linger", async () => {
    const { store, catalog, batches, event } = await slowCatalog(0);
    const batcher = createAppendBatcher(catalog, { maxEvents: 100, maxBytes: 1 << 20, lingerMs: 1000 });
    for (let i = 0; i < 3; i += 1) {
      const sent = performance.now();
      await batcher.append(event());
      expect(performance.now() - sent).toBeLessThan(500);
      await sleep(5);
    }
    expect(batches).toEqual([1, 1, 1]);
    await store.close();
  });
});
