import { describe, it, expect, beforeAll, afterAll } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import Database from "better-sqlite3";
import { filesUnder, needlesInFiles, waitFor } from "@whc/testing";
import { startTestSystem, type TestSystem } from "./testing/index.js";

/**
 * Headers, sub-path and query sealed at rest (issue #19, ADR 0009), all-in-one: a capture's
 * credentials never reach a file of the data directory in clear, whatever the endpoint does
 * with it (capture, metadata only, too large, relay, proxy, a client's attempt), while every
 * reader (event detail, cURL export, replay, forwarding) still gets them.
 */

// Made of letters only, so no encoding (JSON, URL, SQLite) changes them on the way to a file.
const BEARER = "MarkerOneBearerQzx";
const QUERY = "MarkerTwoQueryQzx";
const SUBPATH = "MarkerThreeSubpathQzx";
const CLIENT_URL = "MarkerFourClientUrlQzx";
const SECRETS = [BEARER, QUERY, SUBPATH, CLIENT_URL];
/** Kept in clear on purpose (the event type): the scan must find it, or it reads nothing. */
const CLEAR_CONTROL = "ClearControlTypeQzx";

const REST = `/in/${SUBPATH}/x?token=${QUERY}&n=1`;

interface Seen {
  url: string;
  headers: http.IncomingHttpHeaders;
}

let t: TestSystem;
let dest: { url: string; seen: Seen[]; close(): Promise<void> };

beforeAll(async () => {
  t = await startTestSystem({
    WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true",
    WHC_FORWARD_POLL_MS: "50",
    WHC_MAX_INBOUND_BODY_BYTES: "4096",
  });
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      seen.push({ url: req.url ?? "", headers: req.headers });
      res.end("ok");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  dest = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
});

afterAll(async () => {
  await dest?.close();
  await t?.stop();
});

async function endpoint(body: Record<string, unknown>): Promise<{ id: string; webhookUrl: string }> {
  const res = await t.a.post("/v1/endpoints", body);
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; webhookUrl: string };
}

async function capture(webhookUrl: string, body: string | Buffer): Promise<{ status: number; id: string }> {
  const res = await fetch(webhookUrl + REST, {
    method: "POST",
    headers: { authorization: `Bearer ${BEARER}`, "content-type": "application/json" },
    body,
  });
  const answer = (await res.json().catch(() => ({}))) as { id?: string };
  return { status: res.status, id: answer.id ?? "" };
}

interface Detail {
  path: string;
  headers: Record<string, string[]>;
  decryption: string;
  canonicalEventType?: string;
  forwardedResponse: { state?: string; target?: string; attempts?: { url: string; trigger: string }[] };
}

async function detail(endpointId: string, eventId: string): Promise<Detail> {
  const res = await t.a.get(`/v1/endpoints/${endpointId}/events/${eventId}`);
  expect(res.status, res.text).toBe(200);
  return res.body as Detail;
}

/** What every reader of the API must still see of a capture sent with capture(). */
function expectRequestShown(d: Detail): void {
  expect(d.path).toBe(REST);
  expect(d.headers.authorization).toEqual([`Bearer ${BEARER}`]);
}

describe("a capture's headers, sub-path and query at rest", () => {
  it("are in no file of the data directory, yet every reader gets them", async () => {
    const payload = JSON.stringify({ type: CLEAR_CONTROL });
    const captured = await endpoint({ displayName: "capture" });
    const metadataOnly = await endpoint({ displayName: "metadata", operatingMode: "metadata_only" });
    const relay = await endpoint({ displayName: "relay", operatingMode: "relay", forward: { url: `${dest.url}/relay`, keepPath: true } });
    const proxy = await endpoint({ displayName: "proxy", operatingMode: "proxy", forward: { url: `${dest.url}/proxy`, keepPath: true } });

    const plain = await capture(captured.webhookUrl, payload);
    expect(plain.status).toBe(200);
    const meta = await capture(metadataOnly.webhookUrl, payload);
    expect(meta.status).toBe(200);
    const tooLarge = await capture(captured.webhookUrl, Buffer.alloc(8192, 0x61));
    expect(tooLarge.status).toBe(413);
    const relayed = await capture(relay.webhookUrl, payload);
    expect(relayed.status).toBe(200);
    const proxied = await capture(proxy.webhookUrl, payload);
    expect(proxied.status).toBe(200);

    // The event detail: headers, sub-path and query opened, for every kind of capture.
    const shown = await detail(captured.id, plain.id);
    expectRequestShown(shown);
    expect([shown.decryption, shown.canonicalEventType]).toEqual(["ok", CLEAR_CONTROL]);
    const metaShown = await detail(metadataOnly.id, meta.id);
    expectRequestShown(metaShown);
    expect(metaShown.decryption).toBe("metadata_only");
    expectRequestShown(await detail(captured.id, tooLarge.id));

    // The cURL export, unmasked, carries them.
    const curl = await t.a.get(`/v1/endpoints/${captured.id}/events/${plain.id}/curl?unmasked=true`);
    expect(curl.status, curl.text).toBe(200);
    const command = (curl.body as { command: string }).command;
    for (const s of [BEARER, QUERY, SUBPATH]) expect(command).toContain(s);

    // Replay sends the captured Authorization header.
    const replayed = await t.a.post(`/v1/endpoints/${captured.id}/events/${plain.id}/replay`, { target_url: `${dest.url}/replayed` });
    expect(replayed.status, replayed.text).toBe(200);
    expect(dest.seen.find((s) => s.url === "/replayed")?.headers.authorization).toBe(`Bearer ${BEARER}`);

    // Relay and proxy send them on with the sub-path and query; the record shows the URLs.
    const relayShown = await waitFor(
      async () => {
        const d = await detail(relay.id, relayed.id);
        return d.forwardedResponse.state === "delivered" ? d : undefined;
      },
      { what: "the relay delivery" },
    );
    expect(relayShown.forwardedResponse.target).toBe(`${dest.url}/relay${REST}`);
    expect(relayShown.forwardedResponse.attempts?.map((a) => a.url)).toEqual([`${dest.url}/relay${REST}`]);
    // A proxy answers with the destination's answer: the event is the endpoint's only one.
    const proxyItems = (await t.a.get(`/v1/endpoints/${proxy.id}/events`)).body as { items: { id: string }[] };
    expect(proxyItems.items).toHaveLength(1);
    const proxyShown = await detail(proxy.id, proxyItems.items[0]!.id);
    expectRequestShown(proxyShown);
    expect(proxyShown.forwardedResponse.attempts?.map((a) => a.url)).toEqual([`${dest.url}/proxy${REST}`]);
    for (const prefix of ["/relay", "/proxy"]) {
      const sent = dest.seen.find((s) => s.url === prefix + REST);
      expect(sent?.headers.authorization, prefix).toBe(`Bearer ${BEARER}`);
    }

    // An attempt a client reports (whc listen), to a URL carrying the capture's path.
    const clientUrl = `http://127.0.0.1:9/${CLIENT_URL}${REST}`;
    const reported = await t.a.post(`/v1/endpoints/${relay.id}/events/${relayed.id}/attempts`, { url: clientUrl, status: 200, durationMs: 3 });
    expect(reported.status, reported.text).toBe(201);
    expect((await detail(relay.id, relayed.id)).forwardedResponse.attempts?.map((a) => a.url)).toContain(clientUrl);

    // At rest, before a checkpoint: the WAL holds the newest pages.
    const catalogFile = filesUnder(t.dataDir).find((f) => f.endsWith(".db"));
    expect(catalogFile).toBeDefined();
    expect(filesUnder(t.dataDir).some((f) => f.endsWith("-wal"))).toBe(true);
    expect(needlesInFiles(t.dataDir, [CLEAR_CONTROL])).not.toEqual([]);
    expect(needlesInFiles(t.dataDir, SECRETS)).toEqual([]);

    // After a checkpoint: the main file holds every page.
    const db = new Database(catalogFile as string);
    try {
      db.pragma("wal_checkpoint(TRUNCATE)");
    } finally {
      db.close();
    }
    expect(needlesInFiles(t.dataDir, [CLEAR_CONTROL])).not.toEqual([]);
    expect(needlesInFiles(t.dataDir, SECRETS)).toEqual([]);
  });
});
