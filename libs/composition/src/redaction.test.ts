import { describe, it, expect, beforeAll, afterAll } from "vitest";
import Database from "better-sqlite3";
import Stripe from "stripe";
import { filesUnder, needlesInFiles, waitFor } from "@whc/testing";
import { startDestination, startTestSystem, type TestDestination, type TestSystem } from "./testing/index.js";

/**
 * Redaction, all-in-one (design §16, issue #31): what an endpoint redacts is verified as sent,
 * then stored replaced, byte for byte around the value; search, the data files, the event
 * detail, cURL export, replay and forwarding all see only the redacted capture.
 */

// Letters and digits only, so no encoding on the way to a file changes them.
const CARD = "4242424242424242";
const OTHER_CARD = "5555555555554444";
const BEARER = "BearerRedactQzx";
/** Kept in clear on purpose (the event type): the file scan must find it, or it reads nothing. */
const CLEAR_CONTROL = "charge.redactcontrolqzx";

interface Detail {
  body?: string;
  headers: Record<string, string[]>;
  verification: string;
  canonicalEventType?: string;
  redactions?: { headers: number; jsonPaths: number; patterns: number };
  forwardedResponse: { state?: string };
}

let t: TestSystem;
let dest: TestDestination;

beforeAll(async () => {
  t = await startTestSystem({ WHC_REPLAY_ALLOW_PRIVATE_TARGETS: "true", WHC_FORWARD_POLL_MS: "50" });
  dest = await startDestination();
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

async function send(webhookUrl: string, body: string, headers: Record<string, string>): Promise<string> {
  const res = await fetch(webhookUrl, { method: "POST", headers, body });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: string }).id;
}

async function detail(endpointId: string, eventId: string): Promise<Detail> {
  const res = await t.a.get(`/v1/endpoints/${endpointId}/events/${eventId}`);
  expect(res.status, res.text).toBe(200);
  return res.body as Detail;
}

async function search(endpointId: string, words: string): Promise<string[]> {
  const res = await t.a.get(`/v1/endpoints/${endpointId}/events?search=${encodeURIComponent(words)}`);
  expect(res.status, res.text).toBe(200);
  return (res.body as { items: { id: string }[] }).items.map((e) => e.id);
}

/** A Stripe event with the card number at $.data.object.card.number, spaced as a sender might. */
const stripePayload = (card: string) =>
  `{\n  "id": "evt_redact_1",\n  "type": "${CLEAR_CONTROL}",\n  "data": { "object": { "card": { "number" :  "${card}", "exp_month": 12 }, "amount": 4200, "note": "visible words" } }\n}`;

describe("redaction (design §16)", () => {
  it("verifies a Stripe-signed body, then stores it redacted byte for byte around the value; search and the data files never see the value", async () => {
    const secret = "whsec_redaction_test";
    const ep = await endpoint({
      provider: "stripe",
      secret,
      redact: { headers: ["authorization"], jsonPaths: ["$.data.object.card.number"] },
    });
    const payload = stripePayload(CARD);
    const stripe = new Stripe("sk_test_x");
    const id = await send(ep.webhookUrl, payload, {
      "content-type": "application/json",
      authorization: `Bearer ${BEARER}`,
      "stripe-signature": stripe.webhooks.generateTestHeaderString({ payload, secret }),
    });

    const d = await detail(ep.id, id);
    // Verified on the bytes as sent: the signature covers the card number.
    expect(d.verification).toBe("verified");
    expect(d.canonicalEventType).toBe(CLEAR_CONTROL);
    // Stored: exactly the sent bytes with the value spliced out (spacing, order, everything else kept).
    const at = Buffer.from(payload).indexOf(`"${CARD}"`);
    const expected = Buffer.concat([Buffer.from(payload).subarray(0, at), Buffer.from('"[redacted]"'), Buffer.from(payload).subarray(at + CARD.length + 2)]);
    expect(Buffer.from(d.body ?? "", "utf8").equals(expected)).toBe(true);
    expect(d.headers.authorization).toEqual(["[redacted]"]);
    expect(d.headers["stripe-signature"]?.[0]).toMatch(/^t=\d+,v1=/);
    expect(d.redactions).toEqual({ headers: 1, jsonPaths: 1, patterns: 0 });

    // Search is built from the stored bytes: the value is not there, the words around it are.
    expect(await search(ep.id, CARD)).toEqual([]);
    expect(await search(ep.id, "visible words")).toEqual([id]);

    // The data files, before and after a checkpoint: the value and the credential nowhere,
    // while the event type (kept in clear) is found, so the scan reads what was written.
    const catalogFile = filesUnder(t.dataDir).find((f) => f.endsWith(".db"));
    expect(filesUnder(t.dataDir).some((f) => f.endsWith("-wal"))).toBe(true);
    expect(needlesInFiles(t.dataDir, [CLEAR_CONTROL])).not.toEqual([]);
    expect(needlesInFiles(t.dataDir, [CARD, BEARER])).toEqual([]);
    const db = new Database(catalogFile as string);
    try {
      db.pragma("wal_checkpoint(TRUNCATE)");
    } finally {
      db.close();
    }
    expect(needlesInFiles(t.dataDir, [CLEAR_CONTROL])).not.toEqual([]);
    expect(needlesInFiles(t.dataDir, [CARD, BEARER])).toEqual([]);
  });

  it("replaces pattern matches in UTF-8 bodies, and leaves endpoints without redact alone", async () => {
    const ep = await endpoint({ redact: { patterns: ["\\b\\d{13,19}\\b"] } });
    const id = await send(ep.webhookUrl, `naïve text: cards ${CARD} and ${OTHER_CARD}, order 12345`, { "content-type": "text/plain; charset=utf-8" });
    const d = await detail(ep.id, id);
    expect(d.body).toBe("naïve text: cards [redacted] and [redacted], order 12345");
    expect(d.redactions).toEqual({ headers: 0, jsonPaths: 0, patterns: 2 });
    expect(await search(ep.id, OTHER_CARD)).toEqual([]);

    const plain = await endpoint({});
    const kept = await send(plain.webhookUrl, `cards ${CARD}`, { "content-type": "text/plain" });
    const shown = await detail(plain.id, kept);
    expect(shown.body).toBe(`cards ${CARD}`);
    expect(shown.redactions).toBeUndefined();
  });

  it("sends the redacted bytes on replay, redelivery and in the cURL command, saying so", async () => {
    const ep = await endpoint({
      operatingMode: "relay",
      forward: { url: `${dest.url}/relay` },
      redact: { headers: ["authorization"], jsonPaths: ["$.data.object.card.number"] },
    });
    const payload = stripePayload(CARD);
    const id = await send(ep.webhookUrl, payload, { "content-type": "application/json", authorization: `Bearer ${BEARER}` });
    const stored = Buffer.from((await detail(ep.id, id)).body ?? "", "utf8");
    expect(stored.includes(CARD)).toBe(false);

    // The relay delivery forwards what is stored.
    await waitFor(async () => ((await detail(ep.id, id)).forwardedResponse.state === "delivered" ? true : undefined), { what: "the relay delivery" });
    const relayed = dest.received.find((s) => s.url === "/relay");
    expect(relayed?.body.equals(stored)).toBe(true);
    expect(relayed?.headers.authorization).toBe("[redacted]");

    // Redelivery: the same bytes, and the answer says they were redacted.
    const redelivered = await t.a.post(`/v1/endpoints/${ep.id}/events/${id}/redeliver`, {});
    expect(redelivered.status, redelivered.text).toBe(200);
    expect((redelivered.body as { warnings?: { code: string }[] }).warnings?.map((w) => w.code)).toEqual(["body_redacted"]);
    expect(dest.received.filter((s) => s.url === "/relay").at(-1)?.body.equals(stored)).toBe(true);

    // An exact replay sends the redacted bytes, with the warning.
    const replayed = await t.a.post(`/v1/endpoints/${ep.id}/events/${id}/replay`, { target_url: `${dest.url}/replayed` });
    expect(replayed.status, replayed.text).toBe(200);
    expect((replayed.body as { warnings?: { code: string }[] }).warnings?.map((w) => w.code)).toEqual(["body_redacted"]);
    expect(dest.received.find((s) => s.url === "/replayed")?.body.equals(stored)).toBe(true);

    // cURL export: not byte-identical to what the sender sent.
    const curl = await t.a.get(`/v1/endpoints/${ep.id}/events/${id}/curl?unmasked=true`);
    expect(curl.status, curl.text).toBe(200);
    const exported = curl.body as { command: string; byteIdentical: boolean; warnings?: { code: string }[] };
    expect(exported.byteIdentical).toBe(false);
    expect(exported.warnings?.map((w) => w.code)).toEqual(["body_redacted"]);
    expect(exported.command).not.toContain(CARD);

    // A proxy forwards what is stored too, before the sender is answered.
    const proxy = await endpoint({ operatingMode: "proxy", forward: { url: `${dest.url}/proxy` }, redact: { jsonPaths: ["$.data.object.card.number"] } });
    const proxied = await fetch(proxy.webhookUrl, { method: "POST", headers: { "content-type": "application/json" }, body: payload });
    expect([proxied.status, await proxied.text()]).toEqual([200, "ok"]);
    expect(dest.received.find((s) => s.url === "/proxy")?.body.equals(stored)).toBe(true);

    // The same capture on an endpoint without redact: byte-identical, no warning.
    const plain = await endpoint({});
    const plainId = await send(plain.webhookUrl, payload, { "content-type": "application/json" });
    const plainCurl = (await t.a.get(`/v1/endpoints/${plain.id}/events/${plainId}/curl`)).body as { byteIdentical: boolean; warnings?: unknown[] };
    expect(plainCurl).toMatchObject({ byteIdentical: true });
    expect(plainCurl.warnings).toBeUndefined();
    const plainReplay = await t.a.post(`/v1/endpoints/${plain.id}/events/${plainId}/replay`, { target_url: `${dest.url}/plain` });
    expect((plainReplay.body as { warnings?: unknown[] }).warnings).toBeUndefined();
  });

  it("applies a change of settings to the next capture, and keeps old captures as stored", async () => {
    const ep = await endpoint({});
    const before = await send(ep.webhookUrl, `card ${CARD}`, { "content-type": "text/plain" });
    const updated = await t.a.call("PATCH", `/v1/endpoints/${ep.id}`, { json: { redact: { patterns: ["\\d{16}"] } } });
    expect(updated.status, updated.text).toBe(200);
    const after = await waitFor(
      async () => {
        const id = await send(ep.webhookUrl, `card ${CARD}`, { "content-type": "text/plain" });
        return (await detail(ep.id, id)).redactions ? id : undefined;
      },
      { what: "ingest to see the new settings" },
    );
    expect((await detail(ep.id, after)).body).toBe("card [redacted]");
    expect((await detail(ep.id, before)).body).toBe(`card ${CARD}`);
  });
});
