import { describe, it, expect, beforeAll, afterAll } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { BSON, MongoClient } from "mongodb";
import Stripe from "stripe";
import { needlesIn, needlesInFiles, waitFor } from "@whc/testing";
import { startCluster, type Cluster } from "./cluster.js";

/**
 * Headers, sub-path and query sealed at rest (issue #19, ADR 0009) across real processes: ingest
 * seals, the catalog process stores (the embedded store, or MongoDB when the run is given one),
 * the gateway and replay open. No credential of a capture is at rest in clear; the API, cURL
 * export, replay and a relay still carry it.
 */

const BEARER = "DistMarkerBearerQzx";
const QUERY = "DistMarkerQueryQzx";
const SUBPATH = "DistMarkerSubpathQzx";
const SECRETS = [BEARER, QUERY, SUBPATH];
/** Stored in clear on purpose (the event type): the scan must find it, or it reads nothing. */
const CLEAR_CONTROL = "DistClearControlQzx";
const REST = `/in/${SUBPATH}?token=${QUERY}`;
/** A card number an endpoint redacts (design §16): in no file, document or search result. */
const CARD = "4000056655665556";

let cluster: Cluster;
const seen: { url: string; authorization: string | undefined }[] = [];
let server: http.Server;
let destUrl: string;

beforeAll(async () => {
  cluster = await startCluster({ WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true", WHC_FORWARD_POLL_MS: "100" });
  server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      seen.push({ url: req.url ?? "", authorization: req.headers.authorization });
      res.end("ok");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  destUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  await cluster?.shutdown();
});

/** Every event document in the cluster's MongoDB database, as the bytes the server stores. */
async function mongoDocuments(uri: string): Promise<[string, Uint8Array][]> {
  const client = await MongoClient.connect(uri);
  try {
    const docs = await client.db().collection("events").find({}).toArray();
    return docs.map((d) => [`events/${String(d._id)}`, BSON.serialize(d)]);
  } finally {
    await client.close();
  }
}

async function atRest(needles: readonly string[]): Promise<string[]> {
  const uri = cluster.env.WHC_MONGODB_URI;
  const files = needlesInFiles(cluster.env.WHC_DATA_DIR!, needles);
  return uri ? [...files, ...needlesIn(await mongoDocuments(uri), needles)] : files;
}

describe("distributed: redaction (design §16)", () => {
  it("verifies a Stripe-signed body in ingest, then stores it redacted byte for byte around the value; search, replay and the store never see it", async () => {
    const secret = "whsec_distributed_redaction";
    const res = await cluster.api.post("/v1/endpoints", {
      slug: "redacted",
      provider: "stripe",
      secret,
      redact: { headers: ["authorization"], jsonPaths: ["$.data.object.card.number"], patterns: ["\\bsk_live_[A-Za-z0-9]{8,32}"] },
    });
    expect(res.status, res.text).toBe(201);
    const ep = res.body as { id: string; webhookUrl: string };
    const payload = `{"type":"${CLEAR_CONTROL}","data":{"object":{"card":{ "number": "${CARD}" },"key":"sk_live_abcdEFGH1234","words":"kept here"}}}`;
    const sent = await fetch(ep.webhookUrl, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${BEARER}`,
        "stripe-signature": new Stripe("sk_test_x").webhooks.generateTestHeaderString({ payload, secret }),
      },
      body: payload,
    });
    expect(sent.status).toBe(200);
    const id = ((await sent.json()) as { id: string }).id;

    const detail = (await cluster.api.get(`/v1/endpoints/${ep.id}/events/${id}`)).body as Record<string, unknown> & { headers: Record<string, string[]> };
    expect(detail).toMatchObject({ verification: "verified", redactions: { headers: 1, jsonPaths: 1, patterns: 1 } });
    expect(detail.body).toBe(payload.replace(`"${CARD}"`, '"[redacted]"').replace("sk_live_abcdEFGH1234", "[redacted]"));
    expect(detail.headers.authorization).toEqual(["[redacted]"]);
    const found = async (words: string) => ((await cluster.api.get(`/v1/endpoints/${ep.id}/events?search=${words}`)).body as { items: unknown[] }).items.length;
    expect([await found(CARD), await found("kept")]).toEqual([0, 1]);
    const curl = await cluster.api.get(`/v1/endpoints/${ep.id}/events/${id}/curl`);
    expect(curl.body).toMatchObject({ byteIdentical: false, warnings: [{ code: "body_redacted" }] });
    const replayed = await cluster.api.post(`/v1/endpoints/${ep.id}/events/${id}/replay`, { target_url: `${destUrl}/redacted` });
    expect(replayed.status, replayed.text).toBe(200);
    expect(replayed.body.warnings).toEqual([expect.objectContaining({ code: "body_redacted" })]);
    expect(seen.find((s) => s.url === "/redacted")?.authorization).toBe("[redacted]");
    expect(await atRest([CLEAR_CONTROL])).not.toEqual([]);
    expect(await atRest([CARD])).toEqual([]);
  });
});

describe("distributed: a capture's headers, sub-path and query at rest", () => {
  it("are stored sealed, yet the API, cURL export, replay and a relay carry them", async () => {
    const create = async (body: Record<string, unknown>) => {
      const res = await cluster.api.post("/v1/endpoints", body);
      expect(res.status, res.text).toBe(201);
      return res.body as { id: string; webhookUrl: string };
    };
    const captured = await create({ slug: "sealed-capture" });
    const relay = await create({ slug: "sealed-relay", operatingMode: "relay", forward: { url: `${destUrl}/relay`, keepPath: true } });
    const send = async (webhookUrl: string) => {
      const res = await fetch(webhookUrl + REST, {
        method: "POST",
        headers: { authorization: `Bearer ${BEARER}`, "content-type": "application/json" },
        body: JSON.stringify({ type: CLEAR_CONTROL }),
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { id: string }).id;
    };
    const plainId = await send(captured.webhookUrl);
    const relayedId = await send(relay.webhookUrl);

    const detail = await cluster.api.get(`/v1/endpoints/${captured.id}/events/${plainId}`);
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({ path: REST, decryption: "ok", canonicalEventType: CLEAR_CONTROL });
    expect(detail.body.headers.authorization).toEqual([`Bearer ${BEARER}`]);
    const curl = await cluster.api.get(`/v1/endpoints/${captured.id}/events/${plainId}/curl?unmasked=true`);
    for (const s of SECRETS) expect(curl.body.command).toContain(s);
    const replayed = await cluster.api.post(`/v1/endpoints/${captured.id}/events/${plainId}/replay`, { target_url: `${destUrl}/replayed` });
    expect(replayed.status, replayed.text).toBe(200);
    expect(seen.find((s) => s.url === "/replayed")?.authorization).toBe(`Bearer ${BEARER}`);

    const forwarded = await waitFor(
      async () => {
        const f = (await cluster.api.get(`/v1/endpoints/${relay.id}/events/${relayedId}`)).body.forwardedResponse as {
          state: string;
          target: string;
          attempts: { url: string }[];
        };
        return f.state === "delivered" ? f : undefined;
      },
      { what: "the relay delivery" },
    );
    expect([forwarded.target, forwarded.attempts.map((a) => a.url)]).toEqual([`${destUrl}/relay${REST}`, [`${destUrl}/relay${REST}`]]);
    expect(seen.find((s) => s.url === `/relay${REST}`)?.authorization).toBe(`Bearer ${BEARER}`);

    expect(await atRest([CLEAR_CONTROL])).not.toEqual([]);
    expect(await atRest(SECRETS)).toEqual([]);
    // Once every process has stopped (SQLite checkpoints its WAL into the file on close).
    for (const s of ["gateway", "ingest", "replay", "catalog"] as const) await cluster.stop(s);
    expect(await atRest([CLEAR_CONTROL])).not.toEqual([]);
    expect(await atRest([...SECRETS, CARD])).toEqual([]);
  });
});
