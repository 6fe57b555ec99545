import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { gzipSync } from "node:zlib";
import net from "node:net";
import { createHash, randomBytes } from "node:crypto";
import fc from "fast-check";
import { sign as octokitSign } from "@octokit/webhooks-methods";
import { Writable } from "node:stream";
import { createLogger } from "@whc/logging";
import { startTestSystem, type TestSystem } from "./testing/index.js";

let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem({ WHC_MAX_STORED_BODY_BYTES: "1000", WHC_MAX_INBOUND_BODY_BYTES: "5000" });
});
afterAll(async () => {
  await t.stop();
});

async function endpoint(body: Record<string, unknown> = {}) {
  const res = await t.a.post("/v1/endpoints", body);
  expect(res.status).toBe(201);
  return res.body as { id: string; webhookUrl: string };
}

async function detail(endpointId: string, eventId: string) {
  const res = await t.a.get(`/v1/endpoints/${endpointId}/events/${eventId}`);
  expect(res.status).toBe(200);
  return res.body;
}

/** A GitHub `pull_request` delivery signed with `secret` (by GitHub's own library). */
async function postGithub(url: string, secret: string, payload: string) {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", "x-github-event": "pull_request", "x-hub-signature-256": await octokitSign(secret, payload) },
    body: payload,
  });
}

/** Sends raw bytes over a socket and returns the status line's code. */
function rawRequest(port: number, head: string | Buffer, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => {
      socket.write(head);
      socket.write(body);
    });
    let response = "";
    socket.on("data", (c) => {
      response += c.toString("latin1");
      const m = /^HTTP\/1\.1 (\d{3})/.exec(response);
      if (m && response.includes("\r\n\r\n")) {
        socket.end();
        resolve(Number(m[1]));
      }
    });
    socket.on("error", reject);
  });
}

describe("the receiving surface", () => {
  it("captures any method, sub-path and query", async () => {
    const ep = await endpoint();
    for (const method of ["GET", "PUT", "PATCH", "DELETE", "OPTIONS"]) {
      const res = await fetch(`${ep.webhookUrl}/a/b?x=1&y=%20`, { method });
      expect(res.status, method).toBe(200);
    }
    const list = await t.a.get(`/v1/endpoints/${ep.id}/events`);
    expect(list.body.items.map((e: { method: string }) => e.method)).toEqual(["OPTIONS", "DELETE", "PATCH", "PUT", "GET"]);
  });

  it("keeps random binary bodies byte for byte (NUL, invalid UTF-8, CRLF)", async () => {
    const ep = await endpoint();
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 0, maxLength: 900 }), async (bytes) => {
        const body = Buffer.from(bytes);
        const res = await fetch(ep.webhookUrl, { method: "POST", body });
        const { id } = (await res.json()) as { id: string };
        const d = await detail(ep.id, id);
        const back = d.bodyEncoding === "base64" ? Buffer.from(d.body, "base64") : Buffer.from(d.body, "utf8");
        expect(back.equals(body)).toBe(true);
        expect(d.originalSizeBytes).toBe(body.length);
      }),
      { numRuns: 40 },
    );
  });

  it("keeps a gzip body as sent, and a chunked one", async () => {
    const ep = await endpoint();
    const gz = gzipSync(Buffer.from('{"compressed":true}'));
    const res = await fetch(ep.webhookUrl, { method: "POST", headers: { "content-encoding": "gzip" }, body: gz });
    const { id } = (await res.json()) as { id: string };
    const d = await detail(ep.id, id);
    expect(Buffer.from(d.body, "base64").equals(gz)).toBe(true);
    expect(d.headers["content-encoding"]).toEqual(["gzip"]);

    const port = Number(new URL(ep.webhookUrl).port);
    const path = new URL(ep.webhookUrl).pathname;
    const status = await rawRequest(
      port,
      `POST ${path} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`,
      Buffer.from("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"),
    );
    expect(status).toBe(200);
    const list = await t.a.get(`/v1/endpoints/${ep.id}/events?limit=1`);
    expect((await detail(ep.id, list.body.items[0].id)).body).toBe("hello world");
  });

  it("stores bodies over WHC_MAX_STORED_BODY_BYTES truncated and flags them", async () => {
    const ep = await endpoint();
    const body = randomBytes(2500);
    const res = await fetch(ep.webhookUrl, { method: "POST", body });
    expect(res.status).toBe(200);
    const { id } = (await res.json()) as { id: string };
    const d = await detail(ep.id, id);
    expect(d.truncated).toBe(true);
    expect(d.originalSizeBytes).toBe(2500);
    expect(Buffer.from(d.body, "base64").equals(body.subarray(0, 1000))).toBe(true);
  });

  it("verifies and names a truncated body by all the bytes that arrived, not the part stored", async () => {
    const secret = "gh-secret-truncated";
    const ep = await endpoint({ provider: "github", secret });
    // 2,500 bytes, stored as 1,000: the action that names the event comes after the cut.
    const payload = JSON.stringify({ padding: "p".repeat(2400), action: "opened" });
    const res = await postGithub(ep.webhookUrl, secret, payload);
    expect(res.status).toBe(200);
    const d = await detail(ep.id, ((await res.json()) as { id: string }).id);
    expect(d).toMatchObject({ truncated: true, originalSizeBytes: payload.length, verification: "verified", canonicalEventType: "pull_request.opened" });

    const forged = await postGithub(ep.webhookUrl, "not-the-secret", payload);
    const f = await detail(ep.id, ((await forged.json()) as { id: string }).id);
    expect(f).toMatchObject({ truncated: true, verification: "failed", verificationFailureReason: "signature_mismatch" });
  });

  it("gives every event the SHA-256 of the bytes received: stored whole, cut, not stored, or redacted smaller", async () => {
    const sha = (b: Buffer | string) => createHash("sha256").update(b).digest("hex");
    const send = async (url: string, body: Buffer | string) => {
      const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
      expect(res.status).toBe(200);
      return ((await res.json()) as { id: string }).id;
    };
    const ep = await endpoint();
    const whole = Buffer.from(JSON.stringify({ type: "whole", n: 1 }));
    const cut = randomBytes(2500);
    expect((await detail(ep.id, await send(ep.webhookUrl, whole))).diagnostic.bodySha256).toBe(sha(whole));
    // Stored as its first 1,000 bytes, hashed as the 2,500 that arrived.
    const cutDetail = await detail(ep.id, await send(ep.webhookUrl, cut));
    expect(cutDetail.truncated).toBe(true);
    expect(cutDetail.diagnostic.bodySha256).toBe(sha(cut));
    const metadataOnly = await endpoint({ operatingMode: "metadata_only" });
    expect((await detail(metadataOnly.id, await send(metadataOnly.webhookUrl, whole))).diagnostic.bodySha256).toBe(sha(whole));
    // Redacted from 2,500 bytes to fewer than 1,000: stored whole, so the hash is the stored
    // bytes', never the original's (which would let a reader test guesses of the value).
    const redacting = await endpoint({ redact: { jsonPaths: ["$.secret"] } });
    const sent = JSON.stringify({ type: "redacted", secret: "s".repeat(2400) });
    const redacted = await detail(redacting.id, await send(redacting.webhookUrl, sent));
    expect(redacted.truncated).toBe(false);
    expect(redacted.body).toBe(JSON.stringify({ type: "redacted", secret: "[redacted]" }));
    expect(redacted.diagnostic.bodySha256).toBe(sha(redacted.body));
    expect(redacted.diagnostic.bodySha256).not.toBe(sha(sent));
  });

  it("does not judge the signature of a body it stopped reading (413): unverified", async () => {
    const secret = "gh-secret-413";
    const ep = await endpoint({ provider: "github", secret });
    const payload = JSON.stringify({ padding: "p".repeat(8000), action: "opened" });
    const res = await postGithub(ep.webhookUrl, secret, payload).catch(() => undefined);
    if (res) expect(res.status).toBe(413);
    const item = (await t.a.get(`/v1/endpoints/${ep.id}/events`)).body.items[0];
    expect(item).toMatchObject({ responseCode: 413, verification: "unverified", canonicalEventType: "pull_request" });
    expect(item.verificationFailureReason).toBeUndefined();
  });

  it("answers 413 over WHC_MAX_INBOUND_BODY_BYTES and stores only the metadata", async () => {
    const ep = await endpoint();
    const res = await fetch(ep.webhookUrl, { method: "POST", body: randomBytes(200_000) }).catch(() => undefined);
    if (res) expect(res.status).toBe(413);
    const list = await t.a.get(`/v1/endpoints/${ep.id}/events`);
    expect(list.body.items).toHaveLength(1);
    const item = list.body.items[0];
    expect(item).toMatchObject({ responseCode: 413, decryption: "metadata_only" });
    // The size the sender declared, though reading stopped after the first 5,000 bytes.
    expect(item.originalSizeBytes).toBe(200_000);
  });

  it("never stores a body in metadata_only mode", async () => {
    const ep = await endpoint({ operatingMode: "metadata_only" });
    const res = await fetch(ep.webhookUrl, { method: "POST", body: "secret payload" });
    const { id } = (await res.json()) as { id: string };
    const d = await detail(ep.id, id);
    expect(d.decryption).toBe("metadata_only");
    expect(d.body).toBeUndefined();
    expect(d.originalSizeBytes).toBe(14);
    const search = await t.a.get(`/v1/endpoints/${ep.id}/events?search=secret`);
    expect(search.body.items).toEqual([]);
    expect(search.body.searchExcludedMetadataOnlyCount).toBe(1);
  });

  it("answers 503 with Retry-After for a paused endpoint and stores nothing", async () => {
    const ep = await endpoint({ status: "paused" });
    const res = await fetch(ep.webhookUrl, { method: "POST", body: "x" });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("60");
    expect((await t.a.get(`/v1/endpoints/${ep.id}/events`)).body.items).toEqual([]);
  });

  it("keeps header sections past Node's 16 KiB default, and answers 431 past 64 KiB", async () => {
    const ep = await endpoint();
    const big = "j".repeat(40 * 1024);
    const res = await fetch(ep.webhookUrl, { method: "POST", headers: { "x-signed-token": big }, body: "{}" });
    expect(res.status).toBe(200);
    const { id } = (await res.json()) as { id: string };
    expect((await detail(ep.id, id)).headers["x-signed-token"]).toEqual([big]);

    const { port } = new URL(ep.webhookUrl);
    const path = new URL(ep.webhookUrl).pathname;
    const tooBig = `POST ${path} HTTP/1.1\r\nHost: x\r\nX-Huge: ${"h".repeat(70 * 1024)}\r\nContent-Length: 2\r\n\r\n`;
    expect(await rawRequest(Number(port), tooBig, Buffer.from("{}"))).toBe(431);
    expect((await t.a.get(`/v1/endpoints/${ep.id}/events`)).body.items).toHaveLength(1);
  });

  it("keeps every header line, past Node's default of 2,000", async () => {
    const ep = await endpoint();
    const { port, pathname } = new URL(ep.webhookUrl);
    const lines = Array.from({ length: 2500 }, (_, i) => `X-N: ${i}\r\n`).join("");
    const head = `POST ${pathname} HTTP/1.1\r\nHost: x\r\n${lines}Content-Length: 2\r\nConnection: close\r\n\r\n`;
    expect(await rawRequest(Number(port), head, Buffer.from("{}"))).toBe(200);
    const item = (await t.a.get(`/v1/endpoints/${ep.id}/events`)).body.items[0];
    const d = await detail(ep.id, item.id);
    expect(d.headers["X-N"]).toHaveLength(2500);
    expect(d.headers["X-N"][2499]).toBe("2499");
  });

  it("shows UTF-8 header values decoded while the cURL export keeps the bytes as sent", async () => {
    const ep = await endpoint();
    const { port, pathname } = new URL(ep.webhookUrl);
    const head = Buffer.concat([
      Buffer.from(`POST ${pathname} HTTP/1.1\r\nHost: x\r\nX-Name: `),
      Buffer.from("café ✓", "utf8"),
      Buffer.from("\r\nX-Latin: caf"),
      Buffer.from([0xe9]),
      Buffer.from("\r\nContent-Length: 2\r\nConnection: close\r\n\r\n"),
    ]);
    expect(await rawRequest(Number(port), head, Buffer.from("{}"))).toBe(200);
    const item = (await t.a.get(`/v1/endpoints/${ep.id}/events`)).body.items[0];
    const d = await detail(ep.id, item.id);
    expect(d.headers["X-Name"]).toEqual(["café ✓"]);
    expect(d.headers["X-Latin"]).toEqual(["café"]);
    const curl = await t.a.get(`/v1/endpoints/${ep.id}/events/${item.id}/curl`);
    expect(curl.body.command).toContain("'X-Name: caf\\xc3\\xa9 \\xe2\\x9c\\x93'");
    expect(curl.body.command).toContain("'X-Latin: caf\\xe9'");
  });

  it("counts at /metrics what senders were answered, verdicts and batch sizes", async () => {
    const scrape = async () => {
      const res = await fetch(`${t.metricsUrl}/metrics`);
      expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
      const text = await res.text();
      // Every outcome is listed from the start, at 0 if it has not happened (none hung up here).
      expect(text).toMatch(/^whc_ingest_requests_total\{outcome="sender_gone"\} 0$/m);
      return (series: string) => Number(new RegExp(`^${series.replace(/[{}"]/g, "\\$&")} (\\S+)$`, "m").exec(text)?.[1] ?? 0);
    };
    const before = await scrape();
    const ep = await endpoint();
    const paused = await endpoint({ status: "paused" });
    for (const body of ["a", "b"]) expect((await fetch(ep.webhookUrl, { method: "POST", body })).status).toBe(200);
    expect((await fetch(`${t.ingestUrl}/h/01a20000-0000-7000-8000-0000000000ff`, { method: "POST", body: "x" })).status).toBe(404);
    expect((await fetch(paused.webhookUrl, { method: "POST", body: "x" })).status).toBe(503);
    await fetch(ep.webhookUrl, { method: "POST", body: randomBytes(8000) }).catch(() => undefined);
    const after = await scrape();
    const delta = (series: string) => after(series) - before(series);
    expect(delta('whc_ingest_requests_total{outcome="stored"}')).toBe(2);
    expect(delta('whc_ingest_requests_total{outcome="unknown_endpoint"}')).toBe(1);
    expect(delta('whc_ingest_requests_total{outcome="paused"}')).toBe(1);
    expect(delta('whc_ingest_requests_total{outcome="too_large"}')).toBe(1);
    expect(delta('whc_ingest_verifications_total{provider="generic",verification="unverified"}')).toBe(2);
    expect(delta("whc_ingest_capture_duration_seconds_count")).toBe(2);
    // Two stored captures and one 413 (its metadata is stored too), each in a call of its own.
    expect(delta("whc_ingest_batch_events_count")).toBe(3);
  });

  it("does not read a large body it will not store: 404 and paused answer, then close", async () => {
    const paused = await endpoint({ status: "paused" });
    const { port, pathname } = new URL(paused.webhookUrl);
    const answerThenClose = (path: string) =>
      new Promise<string>((resolve, reject) => {
        // Declares 100 MB and sends 1 KB: only a server that stops reading can answer and close.
        const socket = net.connect(Number(port), "127.0.0.1", () => {
          socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n${"a".repeat(1024)}`);
        });
        let response = "";
        socket.on("data", (c) => (response += c.toString("latin1")));
        socket.on("close", () => resolve(response.split("\r\n")[0] as string));
        socket.on("error", reject);
      });
    expect(await answerThenClose("/h/01a20000-0000-7000-8000-0000000000ee")).toBe("HTTP/1.1 404 Not Found");
    expect(await answerThenClose("/h/not-an-id")).toBe("HTTP/1.1 404 Not Found");
    expect(await answerThenClose(pathname)).toBe("HTTP/1.1 503 Service Unavailable");
    // A small body is drained instead, and the connection stays open for the next request.
    const small = await fetch(`${t.ingestUrl}/h/01a20000-0000-7000-8000-0000000000ee`, { method: "POST", body: "x" });
    expect(small.status).toBe(404);
    expect(small.headers.get("connection")).not.toBe("close");
  });

  it("answers Expect: 100-continue after the endpoint lookup: go ahead, or refuse before the body is sent", async () => {
    const ep = await endpoint();
    const paused = await endpoint({ status: "paused" });
    const { port } = new URL(ep.webhookUrl);
    /** The status lines received, sending the body only once a 100 Continue has come. */
    const exchange = (path: string) =>
      new Promise<string[]>((resolve, reject) => {
        const body = "{}";
        const socket = net.connect(Number(port), "127.0.0.1", () => {
          socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`);
        });
        let response = "";
        socket.on("data", (c) => {
          const before = response;
          response += c.toString("latin1");
          if (!before.startsWith("HTTP/1.1 100") && response.startsWith("HTTP/1.1 100 Continue\r\n\r\n")) socket.write(body);
        });
        socket.on("close", () => resolve(response.split("\r\n").filter((l) => l.startsWith("HTTP/1.1 "))));
        socket.on("error", reject);
      });
    expect(await exchange(new URL(ep.webhookUrl).pathname)).toEqual(["HTTP/1.1 100 Continue", "HTTP/1.1 200 OK"]);
    expect(await exchange("/h/01a20000-0000-7000-8000-0000000000dd")).toEqual(["HTTP/1.1 404 Not Found"]);
    expect(await exchange(new URL(paused.webhookUrl).pathname)).toEqual(["HTTP/1.1 503 Service Unavailable"]);
    expect((await t.a.get(`/v1/endpoints/${ep.id}/events`)).body.items).toHaveLength(1);
  });

  it("finds an endpoint created a moment ago and forgets a deleted one at once", async () => {
    const ep = await endpoint();
    expect((await fetch(ep.webhookUrl, { method: "POST", body: "1" })).status).toBe(200);
    await t.a.delete(`/v1/endpoints/${ep.id}`);
    expect((await fetch(ep.webhookUrl, { method: "POST", body: "2" })).status).toBe(404);
  });
});

describe("a sender that hangs up mid-body", () => {
  it("gets nothing stored, logs one info line and no error, and the endpoint keeps capturing", async () => {
    const lines: { level: number; msg: string }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(l) as { level: number; msg: string });
        done();
      },
    });
    const s = await startTestSystem({}, createLogger("test", "info", sink));
    try {
      const ep = (await s.a.post("/v1/endpoints", {})).body as { id: string; webhookUrl: string };
      const url = new URL(ep.webhookUrl);
      await new Promise<void>((resolve, reject) => {
        const socket = net.connect(Number(url.port), "127.0.0.1", () => {
          socket.write(`POST ${url.pathname}/cut HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n${"a".repeat(100)}`);
          setTimeout(() => socket.destroy(), 100);
        });
        socket.on("close", () => resolve());
        socket.on("error", reject);
      });
      const logged = async () => {
        for (let i = 0; i < 100 && !lines.some((l) => l.msg.startsWith("sender closed")); i += 1) await new Promise((r) => setTimeout(r, 20));
      };
      await logged();
      expect(lines.filter((l) => l.msg.startsWith("sender closed")).map((l) => l.level)).toEqual([30]);
      expect(lines.filter((l) => l.level >= 50)).toEqual([]);
      expect((await s.a.get(`/v1/endpoints/${ep.id}/events`)).body.items).toEqual([]);
      expect((await fetch(ep.webhookUrl, { method: "POST", body: "after" })).status).toBe(200);
    } finally {
      await s.stop();
    }
  });
});
