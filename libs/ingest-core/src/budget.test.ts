import { describe, it, expect, afterEach, vi } from "vitest";
import { AsyncLocalStorage } from "node:async_hooks";
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { createInflightBudget, isReservation, type Holder, type InflightBudget, type Reservation } from "./budget.js";
import { closeAfterAnswer } from "./answer.js";
import { createBurstCollector, createReleaseCollector, LARGE_GARBAGE_BYTES } from "./collect.js";
import { BodyIdle, BodyOverBudget, bodyReservation, readBodyThen, type ReadBody } from "./request.js";

/** A reservation the test knows will be granted. */
const take = (budget: InflightBudget, bytes: number, holder?: Holder) => budget.reserve(bytes, holder) as Reservation;

describe("the in-flight budget", () => {
  it("reserves up to its limit and refuses what would pass it", () => {
    const budget = createInflightBudget(100);
    const a = take(budget, 60);
    expect(a.bytes).toBe(60);
    expect(budget.reserve(41)).toBe("inflight");
    const b = take(budget, 40);
    expect(budget.held()).toBe(100);
    // A request without a body still gets in at a full budget.
    expect(isReservation(budget.reserve(0))).toBe(true);
    a.release();
    b.release();
    expect(budget.held()).toBe(0);
  });

  it("gives a reservation back once, however many ways its request ends", () => {
    const budget = createInflightBudget(100);
    const a = take(budget, 30);
    const b = take(budget, 50);
    a.release();
    a.release();
    expect(budget.held()).toBe(50);
    expect(a.grow(10)).toBe("inflight");
    expect(budget.held()).toBe(50);
    b.release();
    expect(budget.held()).toBe(0);
  });

  it("says when it is empty again after a burst (half used, or a refusal), once per burst", () => {
    let bursts = 0;
    const budget = createInflightBudget(100, { afterBurst: () => (bursts += 1) });
    take(budget, 10).release();
    expect(bursts).toBe(0);
    const big = take(budget, 60);
    const small = take(budget, 20);
    big.release();
    expect(bursts).toBe(0);
    small.release();
    expect(bursts).toBe(1);
    const held = take(budget, 30);
    expect(budget.reserve(80)).toBe("inflight");
    held.release();
    expect(bursts).toBe(2);
    take(budget, 5).release();
    expect(bursts).toBe(2);
  });

  it("grows a reservation while the budget has room, and not past it", () => {
    const budget = createInflightBudget(100);
    const other = take(budget, 40);
    const r = take(budget, 0);
    expect(r.grow(50)).toBeUndefined();
    expect(r.grow(11)).toBe("inflight");
    expect([r.bytes, budget.held()]).toEqual([50, 90]);
    other.release();
    expect(r.grow(11)).toBeUndefined();
    r.release();
    expect(budget.held()).toBe(0);
  });

  it("lets one peer and one endpoint hold only their share, and others the rest", () => {
    const budget = createInflightBudget(100, {}, { perPeer: 30, perEndpoint: 50 });
    const p1 = { peer: "203.0.113.1", endpoint: "e1" };
    const a = take(budget, 30, p1);
    expect(budget.reserve(1, p1)).toBe("peer");
    // Another address to the same endpoint, up to the endpoint's share.
    const b = take(budget, 20, { peer: "203.0.113.2", endpoint: "e1" });
    expect(budget.reserve(1, { peer: "203.0.113.3", endpoint: "e1" })).toBe("endpoint");
    // A chunked body grows within its shares too.
    const c = take(budget, 0, { peer: "203.0.113.3", endpoint: "e2" });
    expect(c.grow(30)).toBeUndefined();
    expect(c.grow(1)).toBe("peer");
    const d = take(budget, 20, { peer: "203.0.113.4", endpoint: "e3" });
    expect(budget.reserve(1, { peer: "203.0.113.5", endpoint: "e4" })).toBe("inflight");
    // What a reservation gives back is its peer's and endpoint's again.
    a.release();
    expect(isReservation(budget.reserve(0, p1))).toBe(true);
    const again = take(budget, 30, p1);
    for (const r of [again, b, c, d]) r.release();
    expect(budget.held()).toBe(0);
    expect(isReservation(budget.reserve(30, p1))).toBe(true);
  });
});

describe("the collection after a burst", () => {
  it("runs a quiet moment after the last burst ended, and once more after another", () => {
    vi.useFakeTimers();
    try {
      let collections = 0;
      const soon = createBurstCollector(40, () => (collections += 1));
      soon();
      soon();
      vi.advanceTimersByTime(30);
      soon();
      vi.advanceTimersByTime(30);
      expect(collections).toBe(0);
      vi.advanceTimersByTime(10);
      expect(collections).toBe(1);
      vi.advanceTimersByTime(40);
      expect(collections).toBe(2);
      vi.advanceTimersByTime(1000);
      expect(collections).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it("tells its hook what each reservation gives back, once", () => {
    const given: number[] = [];
    const budget = createInflightBudget(100, { released: (bytes) => given.push(bytes) });
    const a = take(budget, 30);
    const b = take(budget, 0);
    b.grow(20);
    a.release();
    a.release();
    b.release();
    expect(given).toEqual([30, 20]);
  });

  it("frees what dead buffers hold outside V8's heap", async () => {
    let bodies: Buffer[] | undefined = Array.from({ length: 8 }, () => Buffer.alloc(8 * 1024 * 1024, 1));
    const held = process.memoryUsage().arrayBuffers;
    expect(bodies).toHaveLength(8);
    bodies = undefined;
    createBurstCollector(0)();
    await new Promise((r) => setTimeout(r, 200));
    expect(held - process.memoryUsage().arrayBuffers).toBeGreaterThanOrEqual(56 * 1024 * 1024);
  });
});

describe("the collection as large bodies die", () => {
  const nextTurn = () => new Promise((r) => setImmediate(r));

  it("collects on the next turn once large dead bodies add up to its step, and never for small ones", async () => {
    let collections = 0;
    const died = createReleaseCollector(4 * LARGE_GARBAGE_BYTES, () => (collections += 1));
    for (let i = 0; i < 10_000; i += 1) died(LARGE_GARBAGE_BYTES - 1);
    died(3 * LARGE_GARBAGE_BYTES);
    await nextTurn();
    expect(collections).toBe(0);
    died(LARGE_GARBAGE_BYTES);
    expect(collections).toBe(0);
    await nextTurn();
    expect(collections).toBe(1);
    // Another whole step before the next one; several steps within a turn make one collection.
    died(3 * LARGE_GARBAGE_BYTES);
    await nextTurn();
    expect(collections).toBe(1);
    died(LARGE_GARBAGE_BYTES);
    died(8 * LARGE_GARBAGE_BYTES);
    await nextTurn();
    expect(collections).toBe(2);
    // What died while that collection was pending was collected by it: a new step starts after.
    died(3 * LARGE_GARBAGE_BYTES);
    await nextTurn();
    expect(collections).toBe(2);
  });
});

describe("lingering after an early answer", () => {
  it("drops what still arrives and says how much once the connection is gone", async () => {
    const dropped: number[] = [];
    const server = http.createServer((req, res) => res.writeHead(503, closeAfterAnswer(req, { dropped: (n) => dropped.push(n), idleMs: 5000 })).end());
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    const status = await exchange(port, `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 300000\r\n\r\n`, "z".repeat(300_000));
    expect(status).toBe("HTTP/1.1 503 Service Unavailable");
    await until(() => dropped.length > 0);
    expect(dropped).toHaveLength(1);
    expect(dropped[0]).toBeGreaterThan(0);
    expect(dropped[0]).toBeLessThanOrEqual(300_000);
  });

  it("drains a large body to its end while it flows, so the sender reads the answer; a stalled one is cut", async () => {
    const dropped: number[] = [];
    const server = http.createServer((req, res) => res.writeHead(503, closeAfterAnswer(req, { dropped: (n) => dropped.push(n), idleMs: 200 })).end());
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    // 8 MiB, written whole before anything is read (as fetch does): only a drain lets the answer through.
    const body = Buffer.alloc(8 * 1024 * 1024, "d");
    const answer = await new Promise<{ status: string; error?: string }>((resolve) => {
      const req = http.request({ port, host: "127.0.0.1", method: "POST", headers: { "content-length": body.length } });
      req.on("response", (res) => {
        res.resume();
        resolve({ status: String(res.statusCode) });
      });
      req.on("error", (err: NodeJS.ErrnoException) => resolve({ status: "error", error: err.code }));
      req.end(body);
    });
    expect(answer).toEqual({ status: "503" });
    await until(() => dropped.length > 0);
    expect(dropped).toEqual([body.length]);

    // Half a body, then nothing: the connection is cut once it has not flowed for idleMs.
    const stalled = await exchange(port, `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 300000\r\n\r\n`, "s".repeat(150_000));
    expect(stalled).toBe("HTTP/1.1 503 Service Unavailable");
    await until(() => dropped.length > 1);
    expect(dropped[1]).toBe(150_000);
  });
});

/**
 * A real HTTP server that admits each request as ingest does: it reserves the body's known
 * length (503 when the budget has no room), gives the reservation back when the response
 * closes, and reads the body within it.
 */
async function admittingServer(budget: InflightBudget, limit: number, idleMs = 0) {
  const seen: { reserved?: number; outcome: string; body?: ReadBody }[] = [];
  const server = http.createServer((req, res) => {
    const reservation = budget.reserve(bodyReservation(req, limit));
    if (!isReservation(reservation)) {
      seen.push({ outcome: "refused" });
      res.writeHead(503, { connection: "close" }).end();
      return;
    }
    res.once("close", reservation.release);
    const entry: (typeof seen)[number] = { reserved: reservation.bytes, outcome: "reading" };
    seen.push(entry);
    readBodyThen(req, { keep: limit, limit, idleMs }, reservation, (err, body) => {
      entry.outcome = err instanceof BodyOverBudget ? "over_budget" : err instanceof BodyIdle ? "idle" : err ? "aborted" : "read";
      entry.body = body;
      if (err instanceof BodyOverBudget || err instanceof BodyIdle) res.writeHead(err instanceof BodyIdle ? 408 : 503, { connection: "close" }).end();
      else if (!err) res.end("ok");
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { port: (server.address() as AddressInfo).port, seen };
}

const servers: http.Server[] = [];
afterEach(() => servers.splice(0).forEach((s) => s.close()));

/** Writes raw request bytes, then resolves with the answer's status line (or "closed"). */
function exchange(port: number, ...parts: string[]): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1", () => parts.forEach((p) => socket.write(p)));
    let text = "";
    socket.on("data", (c) => (text += c.toString("latin1")));
    socket.on("close", () => resolve(text.split("\r\n")[0] || "closed"));
    socket.on("error", () => undefined);
  });
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i += 1) await new Promise((r) => setTimeout(r, 10));
};

describe("reading a body within the budget", () => {
  it("reserves a declared length before reading, and reads the body into it", async () => {
    const budget = createInflightBudget(1000);
    const { port, seen } = await admittingServer(budget, 10_000);
    const body = "x".repeat(600);
    expect(await exchange(port, `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 600\r\nConnection: close\r\n\r\n${body}`)).toBe("HTTP/1.1 200 OK");
    expect(seen[0]).toMatchObject({ reserved: 600, outcome: "read" });
    expect(seen[0]?.body?.whole.toString()).toBe(body);
    await until(() => budget.held() === 0);
    expect(budget.held()).toBe(0);
  });

  it("keeps a declared-length body that arrives whole in memory of its size, and joins one that arrives in pieces", async () => {
    const budget = createInflightBudget(100_000);
    const { port, seen } = await admittingServer(budget, 10_000);
    const whole = "w".repeat(1536);
    expect(await exchange(port, `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1536\r\nConnection: close\r\n\r\n${whole}`)).toBe("HTTP/1.1 200 OK");
    expect(seen[0]?.body?.whole.toString()).toBe(whole);
    // Memory of its own, exactly the body: nothing else of the connection is held with it.
    expect(seen[0]?.body?.whole.buffer.byteLength).toBe(1536);

    const [first, second] = ["a".repeat(700), "b".repeat(836)];
    const answered = new Promise<string>((resolve) => {
      const socket = net.connect(port, "127.0.0.1", () => {
        socket.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1536\r\nConnection: close\r\n\r\n${first}`);
        setTimeout(() => socket.write(second), 50);
      });
      let text = "";
      socket.on("data", (c) => (text += c.toString("latin1")));
      socket.on("close", () => resolve(text.split("\r\n")[0] ?? ""));
    });
    expect(await answered).toBe("HTTP/1.1 200 OK");
    expect(seen[1]?.body?.whole.toString()).toBe(first + second);
    expect(seen[1]?.body?.whole.length).toBe(1536);
  });

  it("refuses a declared length the budget cannot hold, before any of it is read", async () => {
    const budget = createInflightBudget(1000);
    const { port, seen } = await admittingServer(budget, 10_000);
    expect(await exchange(port, `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1001\r\nConnection: close\r\n\r\n`)).toBe("HTTP/1.1 503 Service Unavailable");
    expect(seen).toEqual([{ outcome: "refused" }]);
    expect(budget.held()).toBe(0);
  });

  it("reserves no more than the inbound limit for a larger declared length", async () => {
    const budget = createInflightBudget(1000);
    const { port, seen } = await admittingServer(budget, 100);
    await exchange(port, `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\nConnection: close\r\n\r\n${"y".repeat(5000)}`);
    expect(seen[0]?.reserved).toBe(100);
    expect(seen[0]?.body).toMatchObject({ overLimit: true });
    expect(seen[0]?.body?.whole.length).toBeLessThanOrEqual(100);
  });

  it("grows a chunked body's reservation chunk by chunk and cuts it off past the budget", async () => {
    const budget = createInflightBudget(1000);
    const { port, seen } = await admittingServer(budget, 10_000);
    const chunk = (n: number) => `${n.toString(16)}\r\n${"c".repeat(n)}\r\n`;
    const ok = await exchange(port, `POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`, chunk(300), chunk(300), "0\r\n\r\n");
    expect(ok).toBe("HTTP/1.1 200 OK");
    expect(seen[0]).toMatchObject({ reserved: 0, outcome: "read" });
    expect(seen[0]?.body?.whole.length).toBe(600);

    const cut = await exchange(port, `POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n`, chunk(600), chunk(600), chunk(600));
    expect(cut).toBe("HTTP/1.1 503 Service Unavailable");
    expect(seen[1]?.outcome).toBe("over_budget");
    await until(() => budget.held() === 0);
    expect(budget.held()).toBe(0);
  });

  it("gives the reservation back when the sender hangs up mid-body", async () => {
    const budget = createInflightBudget(100_000);
    const { port, seen } = await admittingServer(budget, 100_000);
    const socket = net.connect(port, "127.0.0.1", () => socket.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 50000\r\n\r\n${"a".repeat(100)}`));
    socket.on("error", () => undefined);
    await until(() => budget.held() === 50_000);
    expect(budget.held()).toBe(50_000);
    socket.destroy();
    await until(() => budget.held() === 0);
    expect(budget.held()).toBe(0);
    expect(seen[0]?.outcome).toBe("aborted");
  });

  it("cuts a stalled body outside the context of another request that was being read", async () => {
    const context = new AsyncLocalStorage<string>();
    const cutIn: (string | undefined)[] = [];
    const server = http.createServer((req, res) => {
      const read = () =>
        readBodyThen(req, { keep: 1000, limit: 1000, idleMs: 60 }, take(createInflightBudget(10_000), 1000), (err) => {
          cutIn.push(err instanceof BodyIdle ? `${req.headers["x-name"]} in ${context.getStore() ?? "no request's context"}` : "read");
          res.writeHead(408, { connection: "close" }).end();
        });
      const name = req.headers["x-name"] as string;
      if (name === "first") context.run(name, read);
      else read();
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    const stalled = (name: string) => exchange(port, `POST / HTTP/1.1\r\nHost: x\r\nX-Name: ${name}\r\nContent-Length: 500\r\n\r\nabc`);
    const first = stalled("first");
    await new Promise((r) => setTimeout(r, 20));
    await Promise.all([first, stalled("second")]);
    expect(cutIn).toHaveLength(2);
    expect(cutIn).toContain("second in no request's context");
  });

  it("cuts a body that stops arriving after the idle time, and keeps one that trickles", async () => {
    const budget = createInflightBudget(100_000);
    const { port, seen } = await admittingServer(budget, 100_000, 150);
    const stalled = exchange(port, `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 50000\r\n\r\n${"a".repeat(100)}`);
    expect(await stalled).toBe("HTTP/1.1 408 Request Timeout");
    expect(seen[0]?.outcome).toBe("idle");
    await until(() => budget.held() === 0);
    expect(budget.held()).toBe(0);

    // Ten bytes every 50 ms: slower than any real sender, but never idle for 150 ms.
    const trickle = await new Promise<string>((resolve) => {
      let text = "";
      const socket = net.connect(port, "127.0.0.1", () => {
        socket.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\nConnection: close\r\n\r\n`);
        let sent = 0;
        const timer = setInterval(() => {
          socket.write("t".repeat(10));
          if ((sent += 10) === 100) clearInterval(timer);
        }, 50);
      });
      socket.on("data", (c) => (text += c.toString("latin1")));
      socket.on("close", () => resolve(text.split("\r\n")[0] as string));
    });
    expect(trickle).toBe("HTTP/1.1 200 OK");
    expect(seen[1]?.outcome).toBe("read");
  });
});
