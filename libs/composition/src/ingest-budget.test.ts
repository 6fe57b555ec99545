import { describe, it, expect, beforeAll, afterAll } from "vitest";
import http from "node:http";
import net from "node:net";
import { startTestSystem, type TestSystem } from "./testing/index.js";

/** WHC_MAX_INBOUND_BODY_BYTES: every slow sender declares a body this large. */
const BODY = 100_000;
/** The shares of the budget one remote address and one endpoint may hold. */
const PER_PEER = 5 * BODY;
const PER_ENDPOINT = 15 * BODY;
/** WHC_INGEST_MAX_INFLIGHT_BYTES: room for 30 slow senders and half a body more. */
const BUDGET = 30 * BODY + BODY / 2;
/** WHC_INGEST_BODY_IDLE_MS; slow senders send a byte ten times as often. */
const IDLE_MS = 1000;
const TRICKLE_MS = IDLE_MS / 10;

let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem({
    WHC_INGEST_MAX_INFLIGHT_BYTES: String(BUDGET),
    WHC_INGEST_MAX_INFLIGHT_BYTES_PER_PEER: String(PER_PEER),
    WHC_INGEST_MAX_INFLIGHT_BYTES_PER_ENDPOINT: String(PER_ENDPOINT),
    WHC_MAX_INBOUND_BODY_BYTES: String(BODY),
    WHC_INGEST_BODY_IDLE_MS: String(IDLE_MS),
  });
});
afterAll(async () => {
  await t.stop();
});

async function endpoint() {
  return (await t.a.post("/v1/endpoints", {})).body as { id: string; webhookUrl: string };
}

/**
 * A raw exchange from `localAddress` (any address of 127.0.0.0/8 is this machine's, so each
 * stands for another sender): sends the head, then each part of the body as it is given
 * (after a `100 Continue` with `waitFor100`); resolves with all the server sent once it closed.
 */
function raw(url: string, head: string, parts: Buffer[], options: { waitFor100?: boolean; localAddress?: string } = {}): Promise<string> {
  const { port, pathname } = new URL(url);
  return new Promise((resolve, reject) => {
    let text = "";
    const socket = net.connect({ port: Number(port), host: "127.0.0.1", localAddress: options.localAddress }, () => {
      socket.write(head.replace("{PATH}", pathname));
      if (!options.waitFor100) for (const p of parts) socket.write(p);
    });
    socket.on("data", (c) => {
      text += c.toString("latin1");
      if (options.waitFor100 && text.startsWith("HTTP/1.1 100 Continue\r\n\r\n") && !text.includes("HTTP/1.1 2")) for (const p of parts.splice(0)) socket.write(p);
    });
    socket.on("close", () => resolve(text));
    socket.on("error", reject);
  });
}

/** The status line and JSON body of a raw answer. */
function answerOf(text: string): { status: string; json: Record<string, unknown> } {
  const finalAnswer = text.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, "");
  return { status: finalAnswer.split("\r\n")[0] as string, json: JSON.parse(finalAnswer.slice(finalAnswer.indexOf("\r\n\r\n") + 4) || "{}") as Record<string, unknown> };
}

/**
 * A sender that declares a body of BODY bytes and sends one byte every TRICKLE_MS from
 * `localAddress` until stopped; `answer` is what the server sent once it closed.
 */
function slowSender(url: string, localAddress: string) {
  const { port, pathname } = new URL(url);
  let text = "";
  let timer: NodeJS.Timeout | undefined;
  const socket = net.connect({ port: Number(port), host: "127.0.0.1", localAddress }, () => {
    socket.write(`POST ${pathname} HTTP/1.1\r\nHost: x\r\nContent-Length: ${BODY}\r\n\r\n`);
    timer = setInterval(() => socket.write("s"), TRICKLE_MS);
  });
  socket.on("data", (c) => (text += c.toString("latin1")));
  socket.on("error", () => undefined);
  const answer = new Promise<string>((resolve) =>
    socket.on("close", () => {
      clearInterval(timer);
      resolve(text);
    }),
  );
  return { answer, answered: () => text !== "", stop: () => clearInterval(timer), destroy: () => socket.destroy() };
}

async function metrics(): Promise<string> {
  return (await fetch(`${t.metricsUrl}/metrics`)).text();
}

async function metric(series: string, text?: string): Promise<number> {
  return Number(new RegExp(`^${series.replace(/[{}"]/g, "\\$&")} (\\S+)$`, "m").exec(text ?? (await metrics()))?.[1]);
}

async function until(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i += 1) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting until ${what}`);
}

/** A POST of `body` with node:http from `localAddress`: status and JSON answer. */
function post(url: string, body: string, localAddress = "127.0.0.1"): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", localAddress, headers: { "content-length": Buffer.byteLength(body) } }, (res) => {
      let text = "";
      res.on("data", (c: Buffer) => (text += c.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as Record<string, unknown> }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("a sender cannot hold the budget (design §14)", () => {
  it("30 slow senders hold their reservations while a normal sender still gets 200; past a share or the budget 503 overloaded; stalled bodies get 408 and their reservations back", async () => {
    const [x, y, z, w] = [await endpoint(), await endpoint(), await endpoint(), await endpoint()];
    const before = await metrics();
    const overloaded = (reason: string, text: string) => metric(`whc_ingest_overloaded_total{reason="${reason}"}`, text);

    // 15 senders from 15 addresses to x (its whole share), 15 from 3 addresses to y (each address's share).
    const slow = [
      ...Array.from({ length: 15 }, (_, i) => slowSender(x.webhookUrl, `127.0.1.${i + 1}`)),
      ...Array.from({ length: 15 }, (_, i) => slowSender(y.webhookUrl, `127.0.2.${(i % 3) + 1}`)),
    ];
    try {
      await until(async () => (await metric("whc_ingest_inflight_body_bytes")) === 30 * BODY, "the 30 slow senders hold their reservations");

      // A normal sender, from another address to another endpoint, is stored at once.
      const sentAt = Date.now();
      const normal = await post(z.webhookUrl, '{"type":"normal"}');
      const tookMs = Date.now() - sentAt;
      expect(normal).toMatchObject({ status: 200, json: { ok: true } });
      expect(tookMs).toBeLessThan(1000);
      expect(await metric("whc_ingest_inflight_body_bytes")).toBe(30 * BODY);
      expect(slow.filter((s) => s.answered())).toEqual([]);

      // Past the endpoint's share (a new address to x), past the peer's share (127.0.2.1 to z):
      // 503 overloaded, the whole body drained so the sender reads it.
      const full = Buffer.alloc(BODY, "f");
      const head = `POST {PATH} HTTP/1.1\r\nHost: x\r\nContent-Length: ${BODY}\r\n\r\n`;
      const endpointFull = answerOf(await raw(x.webhookUrl, head, [full], { localAddress: "127.0.1.99" }));
      const peerFull = answerOf(await raw(z.webhookUrl, head, [full], { localAddress: "127.0.2.1" }));
      for (const refused of [endpointFull, peerFull]) {
        expect(refused).toMatchObject({ status: "HTTP/1.1 503 Service Unavailable", json: { ok: false, error: "overloaded" } });
      }
      // The same with Expect: 100-continue: the refusal is the answer, no 100 Continue.
      const asked = await raw(x.webhookUrl, `POST {PATH} HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: ${BODY}\r\n\r\n`, [full], {
        waitFor100: true,
        localAddress: "127.0.1.98",
      });
      expect(asked).toMatch(/^HTTP\/1\.1 503 /);
      expect(asked).not.toContain("100 Continue");

      // Past the whole budget (half a body is left): a fresh address to a fresh endpoint; and a
      // chunked body that grows past it mid-body.
      const budgetFull = answerOf(await raw(w.webhookUrl, head, [full], { localAddress: "127.0.3.1" }));
      expect(budgetFull).toMatchObject({ status: "HTTP/1.1 503 Service Unavailable", json: { error: "overloaded" } });
      const chunk = Buffer.from(`${(30_000).toString(16)}\r\n${"c".repeat(30_000)}\r\n`);
      const grown = answerOf(await raw(w.webhookUrl, `POST {PATH} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n`, [chunk, chunk, chunk], { localAddress: "127.0.3.2" }));
      expect(grown).toMatchObject({ status: "HTTP/1.1 503 Service Unavailable", json: { error: "overloaded" } });

      const after = await metrics();
      expect(await overloaded("endpoint", after)).toBe((await overloaded("endpoint", before)) + 2);
      expect(await overloaded("peer", after)).toBe((await overloaded("peer", before)) + 1);
      expect(await overloaded("inflight", after)).toBe((await overloaded("inflight", before)) + 2);
      expect(await metric('whc_ingest_requests_total{outcome="overloaded"}', after)).toBe((await metric('whc_ingest_requests_total{outcome="overloaded"}', before)) + 5);
      expect(await metric("whc_ingest_inflight_body_bytes", after)).toBe(30 * BODY);

      // The slow senders stop: after WHC_INGEST_BODY_IDLE_MS each gets 408, and the budget is whole again.
      for (const s of slow) s.stop();
      const answers = await Promise.all(slow.map((s) => s.answer));
      for (const a of answers) {
        expect(answerOf(a)).toMatchObject({ status: "HTTP/1.1 408 Request Timeout", json: { ok: false, error: "request_timeout" } });
      }
      await until(async () => (await metric("whc_ingest_inflight_body_bytes")) === 0, "every reservation is back");
      expect(await metric('whc_ingest_requests_total{outcome="body_timeout"}')).toBe((await metric('whc_ingest_requests_total{outcome="body_timeout"}', before)) + 30);
      for (const ep of [x, y, w]) expect((await t.a.get(`/v1/endpoints/${ep.id}/events`)).body.items).toEqual([]);
      expect((await t.a.get(`/v1/endpoints/${z.id}/events`)).body.items).toHaveLength(1);

      // x's share is free again: a whole body from the address refused before is stored.
      expect(answerOf(await raw(x.webhookUrl, head.replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n"), [full], { localAddress: "127.0.1.99" })).status).toBe("HTTP/1.1 200 OK");
    } finally {
      for (const s of slow) s.destroy();
    }
  });

  it("answers a body declared over the inbound limit 413 at once, without 100 Continue, storing its metadata; the sender still reads it", async () => {
    const ep = await endpoint();
    const over = BODY * 3;
    const asked = await raw(ep.webhookUrl, `POST {PATH} HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: ${over}\r\n\r\n`, [Buffer.alloc(over)], { waitFor100: true });
    expect(asked).not.toContain("100 Continue");
    expect(answerOf(asked)).toMatchObject({ status: "HTTP/1.1 413 Payload Too Large", json: { ok: false, error: "payload_too_large" } });
    // Without Expect: the whole body is written before anything is read back, and the answer still arrives.
    const sent = answerOf(await raw(ep.webhookUrl, `POST {PATH} HTTP/1.1\r\nHost: x\r\nContent-Length: ${over}\r\n\r\n`, [Buffer.alloc(over, "o")]));
    expect(sent.status).toBe("HTTP/1.1 413 Payload Too Large");
    const items = (await t.a.get(`/v1/endpoints/${ep.id}/events`)).body.items as { responseCode: number; originalSizeBytes: number; decryption: string }[];
    expect(items).toHaveLength(2);
    for (const item of items) expect(item).toMatchObject({ responseCode: 413, originalSizeBytes: over, decryption: "metadata_only" });
    expect(await metric("whc_ingest_inflight_body_bytes")).toBe(0);
  });

  it("gives a sender's reservation back when it hangs up mid-body", async () => {
    const ep = await endpoint();
    const { port, pathname } = new URL(ep.webhookUrl);
    const socket = net.connect(Number(port), "127.0.0.1", () => socket.write(`POST ${pathname} HTTP/1.1\r\nHost: x\r\nContent-Length: 90000\r\n\r\nabc`));
    socket.on("error", () => undefined);
    await until(async () => (await metric("whc_ingest_inflight_body_bytes")) === 90_000, "the reservation is held");
    socket.destroy();
    await until(async () => (await metric("whc_ingest_inflight_body_bytes")) === 0, "the reservation is back");
    expect(await metric("whc_ingest_inflight_body_bytes_limit")).toBe(BUDGET);
  });
});
