import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { readFileSync } from "node:fs";
import http from "node:http";
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
      res.on("end", () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers["retry-after"], json: JSON.parse(text) as Answer["json"] }));
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
  const started = await startAllInOne(main!, dir.path, { WHC_BOOTSTRAP_API_KEYS: `flood:${KEY}`, WHC_INGEST_MAX_INFLIGHT_BYTES: String(BUDGET_BYTES) });
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

describe("the distributed ingest process", () => {
  it("reads WHC_INGEST_MAX_INFLIGHT_BYTES: a body past it gets 503 overloaded, counted; one within it is stored", async () => {
    const cluster = await startCluster({ WHC_INGEST_MAX_INFLIGHT_BYTES: String(MIB) });
    try {
      const ep = (await cluster.api.post("/v1/endpoints", { slug: "budget" })).body as { id: string; webhookUrl: string };
      const refused = await post(ep.webhookUrl, Buffer.alloc(MIB + 1, "r"));
      expect(refused).toMatchObject({ status: 503, retryAfter: "1", json: { ok: false, error: "overloaded" } });
      const stored = await post(ep.webhookUrl, Buffer.alloc(MIB, "s"));
      expect(stored.status).toBe(200);
      expect((await cluster.api.get(`/v1/endpoints/${ep.id}/events`)).body.items.map((e: { id: string }) => e.id)).toEqual([stored.json.id]);
      const metrics = await (await fetch(`${cluster.metricsUrls.ingest}/metrics`)).text();
      expect(metrics).toMatch(/^whc_ingest_requests_total\{outcome="overloaded"\} 1$/m);
      expect(metrics).toMatch(/^whc_ingest_inflight_body_bytes_limit 1048576$/m);
    } finally {
      await cluster.shutdown();
    }
  });
});
