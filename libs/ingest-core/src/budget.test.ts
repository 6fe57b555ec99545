import { describe, it, expect, afterEach, vi } from "vitest";
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { createInflightBudget, type InflightBudget } from "./budget.js";
import { closeAfterAnswer } from "./answer.js";
import { createBurstCollector, createReleaseCollector, LARGE_GARBAGE_BYTES } from "./collect.js";
import { BodyOverBudget, bodyReservation, readBodyThen, type ReadBody } from "./request.js";

describe("the in-flight budget", () => {
  it("reserves up to its limit and refuses what would pass it", () => {
    const budget = createInflightBudget(100);
    const a = budget.reserve(60);
    expect(a?.bytes).toBe(60);
    expect(budget.reserve(41)).toBeUndefined();
    const b = budget.reserve(40);
    expect(budget.held()).toBe(100);
    // A request without a body still gets in at a full budget.
    expect(budget.reserve(0)).toBeDefined();
    a?.release();
    b?.release();
    expect(budget.held()).toBe(0);
  });

  it("gives a reservation back once, however many ways its request ends", () => {
    const budget = createInflightBudget(100);
    const a = budget.reserve(30);
    const b = budget.reserve(50);
    a?.release();
    a?.release();
    expect(budget.held()).toBe(50);
    expect(a?.grow(10)).toBe(false);
    expect(budget.held()).toBe(50);
    b?.release();
    expect(budget.held()).toBe(0);
  });

  it("says when it is empty again after a burst (half used, or a refusal), once per burst", () => {
    let bursts = 0;
    const budget = createInflightBudget(100, { afterBurst: () => (bursts += 1) });
    budget.reserve(10)?.release();
    expect(bursts).toBe(0);
    const big = budget.reserve(60);
    const small = budget.reserve(20);
    big?.release();
    expect(bursts).toBe(0);
    small?.release();
    expect(bursts).toBe(1);
    const held = budget.reserve(30);
    expect(budget.reserve(80)).toBeUndefined();
    held?.release();
    expect(bursts).toBe(2);
    budget.reserve(5)?.release();
    expect(bursts).toBe(2);
  });

  it("grows a reservation while the budget has room, and not past it", () => {
    const budget = createInflightBudget(100);
    const other = budget.reserve(40);
    const r = budget.reserve(0);
    expect(r?.grow(50)).toBe(true);
    expect(r?.grow(11)).toBe(false);
    expect([r?.bytes, budget.held()]).toEqual([50, 90]);
    other?.release();
    expect(r?.grow(11)).toBe(true);
    r?.release();
    expect(budget.held()).toBe(0);
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
    const a = budget.reserve(30);
    const b = budget.reserve(0);
    b?.grow(20);
    a?.release();
    a?.release();
    b?.release();
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
    const server = http.createServer((req, res) => res.writeHead(503, closeAfterAnswer(req, (n) => dropped.push(n))).end());
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
});

/**
 * A real HTTP server that admits each request as ingest does: it reserves the body's known
 * length (503 when the budget has no room), gives the reservation back when the response
 * closes, and reads the body within it.
 */
async function admittingServer(budget: InflightBudget, limit: number) {
  const seen: { reserved?: number; outcome: string; body?: ReadBody }[] = [];
  const server = http.createServer((req, res) => {
    const reservation = budget.reserve(bodyReservation(req, limit));
    if (!reservation) {
      seen.push({ outcome: "refused" });
      res.writeHead(503, { connection: "close" }).end();
      return;
    }
    res.once("close", reservation.release);
    const entry: (typeof seen)[number] = { reserved: reservation.bytes, outcome: "reading" };
    seen.push(entry);
    readBodyThen(req, limit, limit, reservation, (err, body) => {
      entry.outcome = err instanceof BodyOverBudget ? "over_budget" : err ? "aborted" : "read";
      entry.body = body;
      if (err instanceof BodyOverBudget) res.writeHead(503, { connection: "close" }).end();
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
});
