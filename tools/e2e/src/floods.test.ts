import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { readFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { apiClient, buildApps, createOpenApiValidator, startAllInOne, tempDir, type ApiClient, type RunningProcess } from "@whc/testing";
import { startCluster } from "./cluster.js";

const MIB = 1024 * 1024;
/** WHC_INGEST_MAX_INFLIGHT_BYTES of the process under test. */
const BUDGET_BYTES = 64 * MIB;
const SENDERS = 400;
const BODY_BYTES = 9 * MIB;
/** The bound on resident memory during the flood, over the budget (issue #19). */
const FLOOD_HEADROOM_BYTES = 300 * MIB;
/** How far from its resident memory before the flood the process must come back, and within how long. */
const RETURN_WITHIN_BYTES = 100 * MIB;
const RETURN_WAIT_MS = 30_000;
const KEY = `whc_${"F".repeat(20)}${"9".repeat(20)}`;

/** Resident memory of a process, read from /proc (VmRSS, in bytes). */
function residentBytes(pid: number): number {
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  if (kib === undefined) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kib) * 1024;
}

interface Answer {
  status: number;
  retryAfter: string | undefined;
  json: { ok: boolean; id?: string; error?: string };
}

/**
 * One sender: a POST of `body` with node:http, which reads the answer as soon as it comes,
 * even while the body is still being written (fetch takes about four times longer to push
 * 400 bodies of 9 MiB through loopback).
 */
function post(url: string, body: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", headers: { "content-type": "application/octet-stream", "content-length": body.length } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => {
        resolve({ status: res.statusCode ?? 0, retryAfter: res.headers["retry-after"], json: JSON.parse(text) as Answer["json"] });
        // Answered before its body was all sent (a refusal): a sender that has its answer stops
        // sending, or ingest would drain the rest of every refused 9 MiB body.
        req.destroy();
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

const mib = (bytes: number) => `${(bytes / MIB).toFixed(0)} MiB`;

let proc: RunningProcess;
let dir: ReturnType<typeof tempDir>;
let api: ApiClient;

beforeAll(async () => {
  const { "all-in-one": main } = buildApps("all-in-one");
  dir = tempDir("whc-e2e-flood-");
  const started = await startAllInOne(main!, dir.path, {
    WHC_BOOTSTRAP_API_KEYS: `flood:${KEY}`,
    WHC_INGEST_MAX_INFLIGHT_BYTES: String(BUDGET_BYTES),
    // Every sender here is one process sharing two cores with ingest (and, in CI, with other
    // tests): one sender's body can make no progress for seconds while the others flow. The
    // idle cut (408) is not what these tests are about (ingest-budget.test.ts is); refused
    // bodies still linger at most 30 s.
    WHC_INGEST_BODY_IDLE_MS: "600000",
  });
  proc = started.proc;
  const openapi = (await (await fetch(`${started.gatewayUrl}/v1/openapi.json`)).json()) as Record<string, unknown>;
  api = apiClient(started.gatewayUrl, KEY, createOpenApiValidator(openapi));
});

afterAll(async () => {
  await proc?.stop();
  dir?.remove();
});

describe("a flood of large captures against the in-flight budget", () => {
  it(
    `${SENDERS} concurrent ${mib(BODY_BYTES)} POSTs: some stored, the rest 503 overloaded; memory bounded, and back afterwards`,
    async () => {
      const pid = proc.child.pid as number;
      const ep = (await api.post("/v1/endpoints", { slug: "flood" })).body as { id: string; webhookUrl: string };
      // One request first, so the start figure is that of a process that has captured.
      expect((await fetch(ep.webhookUrl, { method: "POST", body: "warm" })).status).toBe(200);
      const startRss = residentBytes(pid);
      let peakRss = startRss;
      const sampler = setInterval(() => (peakRss = Math.max(peakRss, residentBytes(pid))), 20);

      const body = Buffer.alloc(BODY_BYTES, "w");
      const floodStarted = Date.now();
      const answers = await Promise.all(Array.from({ length: SENDERS }, () => post(ep.webhookUrl, body)));
      clearInterval(sampler);
      peakRss = Math.max(peakRss, residentBytes(pid));
      const endRss = residentBytes(pid);
      const floodMs = Date.now() - floodStarted;

      const stored = answers.filter((a) => a.status === 200);
      const refused = answers.filter((a) => a.status !== 200);
      // Wait for memory to come back: polled, done as soon as it is within the bound.
      let afterRss = residentBytes(pid);
      const waitedFrom = Date.now();
      while (afterRss > startRss + RETURN_WITHIN_BYTES && Date.now() - waitedFrom < RETURN_WAIT_MS) {
        await new Promise((r) => setTimeout(r, 250));
        afterRss = residentBytes(pid);
      }
      console.log(
        `flood (${(floodMs / 1000).toFixed(1)} s): ${stored.length} stored, ${refused.length} overloaded; resident memory before ${mib(startRss)}, ` +
          `peak ${mib(peakRss)} (bound ${mib(BUDGET_BYTES + FLOOD_HEADROOM_BYTES)}), at the end ${mib(endRss)}, ` +
          `${mib(afterRss)} after ${((Date.now() - waitedFrom) / 1000).toFixed(1)} s (bound ${mib(startRss + RETURN_WITHIN_BYTES)})`,
      );

      expect(stored.length).toBeGreaterThan(0);
      expect(refused.length).toBeGreaterThan(0);
      for (const a of refused) {
        expect(a.status).toBe(503);
        expect(a.retryAfter).toBe("1");
        expect(a.json).toMatchObject({ ok: false, error: "overloaded" });
      }
      expect(peakRss).toBeLessThan(BUDGET_BYTES + FLOOD_HEADROOM_BYTES);

      // Every acknowledged capture is readable; nothing refused was stored.
      for (const a of stored) {
        const detail = await api.get(`/v1/endpoints/${ep.id}/events/${a.json.id}`);
        expect(detail.status).toBe(200);
        expect(detail.body).toMatchObject({ originalSizeBytes: BODY_BYTES, truncated: true, decryption: "ok" });
      }
      const listed: string[] = [];
      for (let cursor = ""; ; ) {
        const page = (await api.get(`/v1/endpoints/${ep.id}/events?limit=100${cursor}`)).body as { items: { id: string }[]; nextBefore?: string; nextBeforeId?: string };
        listed.push(...page.items.map((e) => e.id));
        if (!page.nextBefore) break;
        cursor = `&before=${encodeURIComponent(page.nextBefore)}&beforeId=${page.nextBeforeId}`;
      }
      expect(listed).toHaveLength(stored.length + 1);
      expect(new Set(listed)).toEqual(new Set([...stored.map((a) => a.json.id), listed.at(-1)]));

      expect(afterRss).toBeLessThanOrEqual(startRss + RETURN_WITHIN_BYTES);
    },
    120_000,
  );
});

describe("a flood of large bodies sent with fetch (undici)", () => {
  const FETCH_SENDERS = 200;
  it(`${FETCH_SENDERS} concurrent ${mib(BODY_BYTES)} fetch POSTs: every answer is 200 or 503 overloaded, none a connection error`, async () => {
    const ep = (await api.post("/v1/endpoints", { slug: "fetch-flood" })).body as { id: string; webhookUrl: string };
    const bytes = new Uint8Array(BODY_BYTES).fill(0x66);
    const started = Date.now();
    // fetch writes the whole body before it reads the answer: a refused body must be drained
    // (read and dropped) to its end, or the sender sees a reset instead of the 503. Each body
    // goes as one chunk of a stream with its Content-Length declared: on the wire exactly what
    // fetch sends for a Uint8Array body, without the copy fetch makes of each one (1.8 GB
    // here, and seconds of the test process's time that would stall every sender's body).
    const answers = await Promise.all(
      Array.from({ length: FETCH_SENDERS }, async () => {
        const body = new ReadableStream({
          pull(controller) {
            controller.enqueue(bytes);
            controller.close();
          },
        });
        try {
          const res = await fetch(ep.webhookUrl, {
            method: "POST",
            body,
            duplex: "half",
            headers: { "content-type": "application/octet-stream", "content-length": String(BODY_BYTES) },
          } as RequestInit);
          return { status: res.status, json: (await res.json()) as { ok: boolean; error?: string } };
        } catch (err) {
          const cause = (err as { cause?: { code?: string; message?: string } }).cause;
          return { status: 0, error: cause?.code ?? cause?.message ?? String(err) };
        }
      }),
    );
    const count = (status: number) => answers.filter((a) => a.status === status).length;
    console.log(`fetch flood (${((Date.now() - started) / 1000).toFixed(1)} s): ${count(200)} stored, ${count(503)} overloaded, ${count(0)} connection errors`);
    expect(answers.filter((a) => a.status !== 200 && a.status !== 503)).toEqual([]);
    expect(count(200)).toBeGreaterThan(0);
    for (const a of answers.filter((x) => x.status === 503)) expect(a.json).toMatchObject({ ok: false, error: "overloaded" });
  }, 60_000);
});

describe("the distributed ingest process", () => {
  it("reads WHC_INGEST_MAX_INFLIGHT_BYTES and WHC_INGEST_BODY_IDLE_MS: a body past the budget gets 503 overloaded, counted; one within it is stored; a stalled one 408", async () => {
    const cluster = await startCluster({ WHC_INGEST_MAX_INFLIGHT_BYTES: String(MIB), WHC_INGEST_BODY_IDLE_MS: "500" });
    try {
      const ep = (await cluster.api.post("/v1/endpoints", { slug: "budget" })).body as { id: string; webhookUrl: string };
      const refused = await post(ep.webhookUrl, Buffer.alloc(MIB + 1, "r"));
      expect(refused).toMatchObject({ status: 503, retryAfter: "1", json: { ok: false, error: "overloaded" } });
      const stored = await post(ep.webhookUrl, Buffer.alloc(MIB, "s"));
      expect(stored.status).toBe(200);
      expect((await cluster.api.get(`/v1/endpoints/${ep.id}/events`)).body.items.map((e: { id: string }) => e.id)).toEqual([stored.json.id]);
      const metrics = await (await fetch(`${cluster.metricsUrls.ingest}/metrics`)).text();
      expect(metrics).toMatch(/^whc_ingest_requests_total\{outcome="overloaded"\} 1$/m);
      expect(metrics).toMatch(/^whc_ingest_overloaded_total\{reason="inflight"\} 1$/m);
      expect(metrics).toMatch(/^whc_ingest_inflight_body_bytes_limit 1048576$/m);
      // And WHC_INGEST_BODY_IDLE_MS: a body that stops arriving is cut with 408, nothing stored.
      const { port, pathname } = new URL(ep.webhookUrl);
      const stalled = await new Promise<string>((resolve, reject) => {
        let text = "";
        const socket = net.connect(Number(port), "127.0.0.1", () => socket.write(`POST ${pathname} HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nstalls`));
        socket.on("data", (c) => (text += c.toString("latin1")));
        socket.on("close", () => resolve(text.split("\r\n")[0] as string));
        socket.on("error", reject);
      });
      expect(stalled).toBe("HTTP/1.1 408 Request Timeout");
      expect((await cluster.api.get(`/v1/endpoints/${ep.id}/events`)).body.items).toHaveLength(1);
    } finally {
      await cluster.shutdown();
    }
  });
});
