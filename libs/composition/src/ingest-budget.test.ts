import { describe, it, expect, beforeAll, afterAll } from "vitest";
import net from "node:net";
import { startTestSystem, type TestSystem } from "./testing/index.js";

/** WHC_INGEST_MAX_INFLIGHT_BYTES of the system under test. */
const BUDGET = 100_000;

let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem({ WHC_INGEST_MAX_INFLIGHT_BYTES: String(BUDGET) });
});
afterAll(async () => {
  await t.stop();
});

async function endpoint() {
  return (await t.a.post("/v1/endpoints", {})).body as { id: string; webhookUrl: string };
}

/** Sends the head, then each part of the body as it is given; resolves with all the server sent once it closed. */
function raw(url: string, head: string, parts: Buffer[], options: { waitFor100?: boolean } = {}): Promise<string> {
  const { port, pathname } = new URL(url);
  return new Promise((resolve, reject) => {
    let text = "";
    const socket = net.connect(Number(port), "127.0.0.1", () => {
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

async function metric(series: string): Promise<number> {
  const text = await (await fetch(`${t.metricsUrl}/metrics`)).text();
  return Number(new RegExp(`^${series.replace(/[{}"]/g, "\\$&")} (\\S+)$`, "m").exec(text)?.[1]);
}

describe("the ingest in-flight budget", () => {
  it("refuses a declared length past it before reading the body, and the sender still reads the answer", async () => {
    const ep = await endpoint();
    const before = await metric('whc_ingest_requests_total{outcome="overloaded"}');
    // The whole body is written although the answer comes first: the connection is read on
    // (and dropped) until the body ends, so the answer is not lost to a reset.
    const body = Buffer.alloc(BUDGET + 1, "b");
    const answer = await raw(ep.webhookUrl, `POST {PATH} HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n`, [body]);
    expect(answer).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
    expect(answer).toMatch(/\r\nretry-after: 1\r\n/i);
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
    expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))).toMatchObject({ ok: false, error: "overloaded" });
    expect(await metric('whc_ingest_requests_total{outcome="overloaded"}')).toBe(before + 1);
    expect(await metric("whc_ingest_inflight_body_bytes")).toBe(0);
    expect(await metric("whc_ingest_inflight_body_bytes_limit")).toBe(BUDGET);
    expect((await t.a.get(`/v1/endpoints/${ep.id}/events`)).body.items).toEqual([]);

    const fits = await fetch(ep.webhookUrl, { method: "POST", body: Buffer.alloc(BUDGET, "f") });
    expect(fits.status).toBe(200);
  });

  it("refuses before the 100 Continue when the declared length does not fit", async () => {
    const ep = await endpoint();
    const answer = await raw(ep.webhookUrl, `POST {PATH} HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: ${BUDGET * 2}\r\n\r\n`, [Buffer.alloc(BUDGET * 2)], {
      waitFor100: true,
    });
    expect(answer).toMatch(/^HTTP\/1\.1 503 /);
    expect(answer).not.toContain("100 Continue");
  });

  it("cuts off a chunked body that grows past it, stores nothing, and gives its bytes back", async () => {
    const ep = await endpoint();
    const chunk = `${(40_000).toString(16)}\r\n${"c".repeat(40_000)}\r\n`;
    const answer = await raw(ep.webhookUrl, `POST {PATH} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n`, [chunk, chunk, chunk, chunk].map((c) => Buffer.from(c)));
    expect(answer).toMatch(/^HTTP\/1\.1 503 /);
    expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))).toMatchObject({ error: "overloaded" });
    expect((await t.a.get(`/v1/endpoints/${ep.id}/events`)).body.items).toEqual([]);
    expect(await metric("whc_ingest_inflight_body_bytes")).toBe(0);

    const small = await raw(ep.webhookUrl, `POST {PATH} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`, [Buffer.from(`${chunk}0\r\n\r\n`)]);
    expect(small).toMatch(/^HTTP\/1\.1 200 /);
    expect(await metric("whc_ingest_inflight_body_bytes")).toBe(0);
  });

  it("gives a sender's reservation back when it hangs up mid-body", async () => {
    const ep = await endpoint();
    const { port, pathname } = new URL(ep.webhookUrl);
    const socket = net.connect(Number(port), "127.0.0.1", () => socket.write(`POST ${pathname} HTTP/1.1\r\nHost: x\r\nContent-Length: 90000\r\n\r\nabc`));
    socket.on("error", () => undefined);
    let held = 0;
    for (let i = 0; i < 100 && held === 0; i += 1) {
      held = await metric("whc_ingest_inflight_body_bytes");
      if (held === 0) await new Promise((r) => setTimeout(r, 10));
    }
    expect(held).toBe(90_000);
    socket.destroy();
    for (let i = 0; i < 100 && held !== 0; i += 1) {
      await new Promise((r) => setTimeout(r, 10));
      held = await metric("whc_ingest_inflight_body_bytes");
    }
    expect(held).toBe(0);
  });
});
