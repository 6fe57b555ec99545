import { describe, it, expect, beforeAll, afterAll } from "vitest";
import net from "node:net";
import { eventDetail, type EventDetailJson } from "@whc/api-model";
import { createOpenApiValidator } from "@whc/testing";
import { refusal, startTestGateway, type TestGateway } from "./testing/index.js";

let t: TestGateway;
let validate: ReturnType<typeof createOpenApiValidator>;
beforeAll(async () => {
  t = await startTestGateway();
  validate = createOpenApiValidator((await (await fetch(`${t.url}/v1/openapi.json`)).json()) as Record<string, unknown>);
});
afterAll(async () => {
  await t.close();
});

const exportUrl = (endpointId: string, query: Record<string, string> = {}) =>
  `${t.url}/v1/endpoints/${endpointId}/events/export${Object.keys(query).length ? `?${new URLSearchParams(query)}` : ""}`;

/** The export's lines, parsed, read through the typed client as the CLI does. */
async function exported(endpointId: string, query: Record<string, string> = {}): Promise<EventDetailJson[]> {
  const text = await new Response(await t.a.api.events.export(endpointId, query)).text();
  return text === "" ? [] : text.trimEnd().split("\n").map((line) => JSON.parse(line) as EventDetailJson);
}

const ids = (details: { id: string }[]) => details.map((d) => d.id);

/** An export's body read to its end: "clean end" or "error: ..." (cut), and the whole lines that came. */
async function readToEnd(body: ReadableStream<Uint8Array>): Promise<{ ended: string; whole: string[] }> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  const ended = await (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return "clean end";
      chunks.push(value);
    }
  })().catch((err: unknown) => `error: ${(err as Error).message}`);
  return { ended, whole: Buffer.concat(chunks).toString("utf8").split("\n").slice(0, -1) };
}

/** The chunks of a chunked HTTP/1.1 answer to GET `url`, as the server framed them (read off a raw socket). */
async function chunksOf(url: string, key: string): Promise<Buffer[]> {
  const { hostname, port, pathname, search } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  socket.end(`GET ${pathname}${search} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`);
  const parts: Buffer[] = [];
  for await (const part of socket) parts.push(part as Buffer);
  const raw = Buffer.concat(parts);
  const chunks: Buffer[] = [];
  let at = raw.indexOf("\r\n\r\n") + 4;
  expect(raw.subarray(0, at).toString("latin1")).toMatch(/^HTTP\/1\.1 200 [^]*\r\ntransfer-encoding: chunked\r\n/i);
  for (;;) {
    const eol = raw.indexOf("\r\n", at);
    const size = parseInt(raw.subarray(at, eol).toString("latin1"), 16);
    if (size === 0) return chunks;
    chunks.push(raw.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

describe("the bulk export", () => {
  it("streams every event's detail, oldest first, exactly as the event read shows it (without marking it read)", async () => {
    const ep = (await t.a.api.endpoints.create({})).id;
    const binary = Uint8Array.from([0xff, 0x00, 0xc3, 0x28]);
    const appended = await t.append(t.a, ep, [
      { body: '{"type":"one"}', canonicalEventType: "one", path: "/a?x=1", headers: [["X-Marker", "m1"], ["X-Marker", "m2"]] },
      {},
      { body: binary, provider: "stripe", verification: "failed" },
    ]);

    const res = await fetch(exportUrl(ep), { headers: { authorization: `Bearer ${t.a.key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/x-ndjson");
    expect(res.headers.get("content-length")).toBeNull();
    validate("GET", res.url, res.status, res.headers, undefined);
    const text = await res.text();
    expect(text.endsWith("\n")).toBe(true);
    const lines = text.trimEnd().split("\n").map((l) => JSON.parse(l) as EventDetailJson);
    expect(ids(lines)).toEqual(appended.map((a) => a.id));
    for (const line of lines) expect(eventDetail.strict().parse(line)).toEqual(line);
    expect(lines.map((l) => [l.decryption, l.body, l.bodyEncoding])).toEqual([
      ["ok", '{"type":"one"}', "utf8"],
      ["metadata_only", undefined, undefined],
      ["ok", Buffer.from(binary).toString("base64"), "base64"],
    ]);
    expect(lines[0]).toMatchObject({ path: "/a?x=1", headers: { "X-Marker": ["m1", "m2"] }, canonicalEventType: "one" });
    expect(lines.some((l) => "readAt" in l)).toBe(false);

    // The event read is the reference: the same JSON, but for the readAt it sets.
    for (const line of lines) {
      const { readAt, ...read } = await t.a.api.events.get(ep, line.id);
      expect(readAt).toEqual(expect.any(String));
      expect(line).toEqual(read);
    }
  });

  it("walks past pages of the catalog: 1,203 events in order, each once", async () => {
    const ep = (await t.a.api.endpoints.create({})).id;
    const appended = [];
    for (let batch = 0; batch < 3; batch++) {
      appended.push(...(await t.append(t.a, ep, Array.from({ length: 401 }, (_, i) => ({ body: `{"n":${batch * 401 + i}}` })))));
    }
    const lines = await exported(ep);
    expect(lines).toHaveLength(1203);
    expect(ids(lines)).toEqual(appended.map((a) => a.id));
    expect(lines.map((l) => (JSON.parse(l.body!) as { n: number }).n)).toEqual(appended.map((_, i) => i));

    // On the wire: HTTP chunks of at least 64 KiB but the last, never one per line (ADR 0095).
    const chunks = await chunksOf(exportUrl(ep), t.a.key);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.slice(0, -1).every((c) => c.length >= 64 * 1024)).toBe(true);
    expect(Buffer.concat(chunks).toString("utf8").trimEnd().split("\n")).toHaveLength(1203);
  });

  it("takes the list's filters, search included, and resumes after a cursor or stops before one", async () => {
    const ep = (await t.a.api.endpoints.create({})).id;
    const [a, b, c, d] = await t.append(t.a, ep, [
      { body: "alpha words", canonicalEventType: "paid", responseCode: 200 },
      { body: "beta words", canonicalEventType: "refunded", responseCode: 500 },
      { body: "alpha again", canonicalEventType: "paid", responseCode: 200, provider: "github" },
      {},
    ]);
    expect(ids(await exported(ep, { eventType: "paid" }))).toEqual([a!.id, c!.id]);
    expect(ids(await exported(ep, { search: "ALPHA" }))).toEqual([a!.id, c!.id]);
    expect(ids(await exported(ep, { search: "alpha", provider: "github" }))).toEqual([c!.id]);
    expect(ids(await exported(ep, { responseCode: "500" }))).toEqual([b!.id]);
    expect(ids(await exported(ep, { after: b!.receivedAt, afterId: b!.id }))).toEqual([c!.id, d!.id]);
    expect(ids(await exported(ep, { before: c!.receivedAt, beforeId: c!.id }))).toEqual([a!.id, b!.id]);
    expect(ids(await exported(ep, { after: a!.receivedAt, afterId: a!.id, before: d!.receivedAt, beforeId: d!.id }))).toEqual([b!.id, c!.id]);
    expect(await exported(ep, { eventType: "nothing" })).toEqual([]);
  });

  it("answers an empty export as an empty 200 body", async () => {
    const ep = (await t.a.api.endpoints.create({})).id;
    const res = await fetch(exportUrl(ep), { headers: { authorization: `Bearer ${t.a.key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/x-ndjson");
    expect(await res.text()).toBe("");
  });

  it("refuses before the first byte with the ordinary JSON error replies", async () => {
    const ep = (await t.a.api.endpoints.create({})).id;
    expect(await refusal(t.b.api.events.export(ep))).toMatchObject({ status: 404, code: "not_found" });
    expect(await refusal(t.a.api.events.export("00000000-0000-4000-8000-000000000000"))).toMatchObject({ status: 404 });
    const half = await refusal(t.a.api.events.export(ep, { after: "2026-01-01T00:00:00Z" }));
    expect(half).toMatchObject({ status: 400, code: "validation_failed", details: { field: "afterId" } });
    // Paging and waiting belong to the list, not the export.
    const limit = await refusal(t.a.api.request("GET", `/v1/endpoints/${ep}/events/export`, { query: { limit: "5" } }));
    expect(limit).toMatchObject({ status: 400, details: { field: "limit" } });
    expect(await refusal(t.client().events.export(ep))).toMatchObject({ status: 401, code: "unauthorized" });
    const res = await fetch(exportUrl(ep, { from: "yesterday" }), { headers: { authorization: `Bearer ${t.a.key}` } });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    validate("GET", res.url, res.status, res.headers, await res.json());
  });

  it("closes the connection of an export that brings nothing for WHC_EXPORT_IDLE_S: the reader sees an error after whole lines", async () => {
    const idle = await startTestGateway({ exportIdleMs: 300 });
    let release = () => {};
    try {
      const ep = (await idle.a.api.endpoints.create({})).id;
      const appended = await idle.append(idle.a, ep, Array.from({ length: 501 }, () => ({ body: "x" })));
      let pages = 0;
      // The second page never comes (until the test ends): the export has nothing more to send.
      idle.hooks.afterListEvents = () => (++pages === 2 ? new Promise<void>((resolve) => (release = resolve)) : undefined);
      const { ended, whole } = await readToEnd(await idle.a.api.events.export(ep));
      expect(ended).toMatch(/^error: /);
      expect(pages).toBe(2);
      expect(whole.length).toBeGreaterThan(0);
      expect(ids(whole.map((l) => JSON.parse(l) as EventDetailJson))).toEqual(appended.slice(0, whole.length).map((a) => a.id));
    } finally {
      release();
      await idle.close();
    }
  });

  it("cuts the connection when a failure comes after the first line: the reader sees an error, never a clean end", async () => {
    const ep = (await t.a.api.endpoints.create({})).id;
    const appended = await t.append(t.a, ep, Array.from({ length: 501 }, () => ({ body: "x" })));
    let pages = 0;
    t.hooks.afterListEvents = () => {
      if (++pages === 2) throw new Error("the catalog went away");
    };
    try {
      const { ended, whole } = await readToEnd(await t.a.api.events.export(ep));
      expect(ended).toMatch(/^error: /);
      // What arrived before the cut (the socket's unsent buffer is dropped) is whole details up to
      // the last newline, in order: the client resumes after the last of them.
      expect(whole.length).toBeLessThanOrEqual(500);
      expect(ids(whole.map((l) => JSON.parse(l) as EventDetailJson))).toEqual(appended.slice(0, whole.length).map((a) => a.id));
    } finally {
      t.hooks.afterListEvents = undefined;
    }
  });
});
